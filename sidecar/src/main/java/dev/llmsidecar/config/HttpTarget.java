package dev.llmsidecar.config;

import java.net.URI;
import java.util.Locale;

/**
 * An http(s) URL taken apart once, with the one default-port rule (80 for http, 443 for https): the upstream
 * (sidecar.upstream.url, parsed when the configuration is read) and the engine's probe URLs under it. Every user
 * takes this instead of reading the URI again, so they cannot disagree on a port.
 *
 * @param host the host to connect to: an IPv6 literal without its brackets
 * @param basePath the URL's path without a trailing slash ("" for none), prepended to every request sent to it
 * @param query the URL's raw query, or null
 */
public record HttpTarget(URI uri, boolean ssl, String host, int port, String basePath, String query) {

    public static HttpTarget of(URI url) {
        String scheme = url.getScheme() == null ? "http" : url.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw new IllegalArgumentException("must be an http or https URL: " + url);
        }
        String host = url.getHost();
        if (host == null || host.isEmpty()) {
            throw new IllegalArgumentException("has no host: " + url);
        }
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1); // what a socket connects to; authority() puts them back
        }
        boolean ssl = scheme.equals("https");
        int port = url.getPort() > 0 ? url.getPort() : ssl ? 443 : 80;
        String path = url.getRawPath() == null ? "" : url.getRawPath();
        if (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        return new HttpTarget(url, ssl, host, port, path, url.getRawQuery());
    }

    /** The request-target sent to it for a client's path and query as received: the base path, then them. */
    public String requestUri(String clientUri) {
        return basePath.isEmpty() ? clientUri : basePath + clientUri;
    }

    /** This URL's own request-target: its path ("/" for none) and query. */
    public String ownRequestUri() {
        String path = basePath.isEmpty() ? "/" : uri.getRawPath();
        return query == null ? path : path + "?" + query;
    }

    /** The Host header's value: the port only when it is not the scheme's default. */
    public String authority() {
        String name = host.indexOf(':') >= 0 ? "[" + host + "]" : host;
        return port == (ssl ? 443 : 80) ? name : name + ":" + port;
    }

    /** The URL of {@code path} under this one's base path (the engine's /health, /metrics, /v1/models). */
    public URI under(String path) {
        return URI.create((ssl ? "https" : "http") + "://" + authority() + basePath
                + (path.startsWith("/") ? path : "/" + path));
    }

    /**
     * Reads a configured URL (SmallRye's implicit converter: sidecar.upstream.url is parsed when the configuration is
     * read, and a bad one stops the start with the property's name before anything listens).
     */
    public static HttpTarget parse(CharSequence value) {
        return of(URI.create(value.toString().trim()));
    }
}
