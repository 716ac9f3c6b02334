package dev.llmsidecar.proxy;

import java.net.URI;

/** Where requests go: parsed once from sidecar.upstream.url. */
record UpstreamTarget(boolean ssl, String host, int port, String basePath) {

    static UpstreamTarget of(URI url) {
        String scheme = url.getScheme() == null ? "http" : url.getScheme().toLowerCase(java.util.Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw new IllegalArgumentException("sidecar.upstream.url must be http or https: " + url);
        }
        if (url.getHost() == null) {
            throw new IllegalArgumentException("sidecar.upstream.url has no host: " + url);
        }
        boolean ssl = scheme.equals("https");
        int port = url.getPort() > 0 ? url.getPort() : ssl ? 443 : 80;
        String path = url.getRawPath() == null ? "" : url.getRawPath();
        if (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        return new UpstreamTarget(ssl, url.getHost(), port, path);
    }

    /** The request-target sent upstream: the base path, then the client's path and query as received. */
    String requestUri(String clientUri) {
        return basePath.isEmpty() ? clientUri : basePath + clientUri;
    }

    String authority() {
        boolean defaultPort = ssl ? port == 443 : port == 80;
        return defaultPort ? host : host + ":" + port;
    }
}
