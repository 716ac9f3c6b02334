package dev.llmsidecar.app;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.function.LongSupplier;
import org.jboss.logging.Logger;

/**
 * A token kept in a file, typically a mounted Kubernetes Secret: read again when asked more than
 * {@link #REREAD_NANOS} after the last read, so a rotated Secret (the kubelet swaps the file) is honoured within a
 * second, without a restart; at most one read of a small file a second. A presented token is compared as its SHA-256,
 * with {@link MessageDigest#isEqual} (constant time, and equal lengths whatever the token's). A file that is missing,
 * unreadable or empty matches nothing, and says so in the log once per change (naming the property, never a value).
 * Used for {@code /q/traces} (sidecar.trace.token-file, as a bearer token) and for the callers trusted to declare SLO
 * targets (sidecar.slo.declared.trust-token-file).
 */
final class TokenFile {

    private static final Logger LOG = Logger.getLogger(TokenFile.class);
    static final long REREAD_NANOS = 1_000_000_000L;
    private static final String BEARER = "Bearer ";

    private final String property;
    private final Path path;
    private final LongSupplier nanoClock;
    private byte[] digest;
    private long readAtNanos;
    private boolean read;
    private String lastProblem;

    /** @param property the property that names the file, for the log */
    TokenFile(String property, Path path, LongSupplier nanoClock) {
        this.property = property;
        this.path = path;
        this.nanoClock = nanoClock;
    }

    /** Whether {@code token} is the file's token. */
    synchronized boolean matches(String token) {
        refresh();
        return digest != null && token != null && MessageDigest.isEqual(sha256(token.strip()), digest);
    }

    /**
     * Whether an {@code Authorization} header's value carries the token as {@code Bearer <token>}: the only place a
     * bearer token is read (a token in a query parameter would land in access logs and shell histories).
     */
    boolean acceptsBearer(String authorization) {
        if (authorization == null || authorization.length() <= BEARER.length()
                || !authorization.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            return false;
        }
        return matches(authorization.substring(BEARER.length()));
    }

    private void refresh() {
        long now = nanoClock.getAsLong();
        if (read && now - readAtNanos < REREAD_NANOS) {
            return;
        }
        read = true;
        readAtNanos = now;
        String problem = null;
        try {
            String token = Files.readString(path, StandardCharsets.UTF_8).strip();
            digest = token.isEmpty() ? null : sha256(token);
            if (token.isEmpty()) {
                problem = "is empty";
            }
        } catch (IOException e) {
            digest = null;
            problem = "cannot be read (" + e.getClass().getSimpleName() + ")";
        }
        if (problem != null && !problem.equals(lastProblem)) {
            LOG.warnf("%s %s %s: it matches no token until it holds one", property, path, problem);
        }
        lastProblem = problem;
    }

    private static byte[] sha256(String token) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is not available", e);
        }
    }
}
