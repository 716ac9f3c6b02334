package dev.llmsidecar.proxy;

import io.vertx.core.MultiMap;
import java.util.Locale;
import java.util.Set;

/** Copies headers across the proxy as RFC 9110 section 7.6.1 asks: hop-by-hop headers stay behind. */
final class ForwardedHeaders {

    private static final Set<String> HOP_BY_HOP = Set.of("connection", "keep-alive", "proxy-authenticate",
            "proxy-authorization", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade");

    private ForwardedHeaders() {
    }

    /**
     * Copies {@code from} into {@code to} without hop-by-hop headers, headers named in Connection, and the
     * extra names given (lower case).
     */
    static void copy(MultiMap from, MultiMap to, Set<String> alsoSkip) {
        Set<String> named = connectionTokens(from.get("connection"));
        for (var e : from) {
            String name = e.getKey().toLowerCase(Locale.ROOT);
            if (HOP_BY_HOP.contains(name) || alsoSkip.contains(name) || named.contains(name)) {
                continue;
            }
            to.add(e.getKey(), e.getValue());
        }
    }

    private static Set<String> connectionTokens(String connection) {
        if (connection == null || connection.isEmpty()) {
            return Set.of();
        }
        java.util.HashSet<String> tokens = new java.util.HashSet<>();
        for (String t : connection.split(",")) {
            String s = t.trim().toLowerCase(Locale.ROOT);
            if (!s.isEmpty()) {
                tokens.add(s);
            }
        }
        return tokens;
    }
}
