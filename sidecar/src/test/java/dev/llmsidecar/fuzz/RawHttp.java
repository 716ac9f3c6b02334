package dev.llmsidecar.fuzz;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * HTTP/1.1 on a blocking loopback socket, read to the byte: what a client of the engine gets, with nothing a client
 * library would smooth over (status line as sent, every header, de-chunked entity bytes, strict chunk framing).
 */
final class RawHttp {

    /** Hop-by-hop or per-response headers: not part of what must be identical (as in ByteExactMatrixTest). */
    static final Set<String> NOT_COMPARED = Set.of("connection", "keep-alive", "transfer-encoding", "date");

    /** Longest a single request may take end to end; a hang fails the execution instead of stalling the fuzzer. */
    static final int SOCKET_TIMEOUT_MILLIS = 10_000;

    /** Longest head or chunk-size line accepted: a runaway line is a framing error, not a reason to buffer forever. */
    private static final int MAX_LINE = 64 * 1024;

    private RawHttp() {
    }

    record Header(String name, String value) {
    }

    /**
     * One response as it came off the socket.
     *
     * @param statusLine the status line without its CRLF
     * @param headers every header in order, names as sent
     * @param entity the entity bytes (de-chunked, never decoded further)
     * @param chunked the response was chunked
     */
    record Response(String statusLine, List<Header> headers, byte[] entity, boolean chunked) {

        /** End-to-end headers, names lower-cased, the values of a repeated name in order. */
        Map<String, List<String>> endToEnd() {
            Map<String, List<String>> m = new TreeMap<>();
            for (Header h : headers) {
                String name = h.name().toLowerCase(Locale.ROOT);
                if (!NOT_COMPARED.contains(name)) {
                    m.computeIfAbsent(name, k -> new ArrayList<>()).add(h.value());
                }
            }
            return m;
        }

        String header(String name) {
            for (Header h : headers) {
                if (h.name().equalsIgnoreCase(name)) {
                    return h.value();
                }
            }
            return null;
        }

        int status() {
            String[] parts = statusLine.split(" ", 3);
            return parts.length > 1 ? Integer.parseInt(parts[1]) : -1;
        }
    }

    /** POSTs {@code body} on a new connection (closed after the response) and reads the whole response. */
    static Response post(int port, String path, byte[] body, Map<String, String> headers) throws IOException {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(SOCKET_TIMEOUT_MILLIS);
            s.setTcpNoDelay(true);
            StringBuilder head = new StringBuilder("POST ").append(path).append(" HTTP/1.1\r\nhost: engine\r\n")
                    .append("connection: close\r\ncontent-type: application/json\r\ncontent-length: ")
                    .append(body.length).append("\r\n");
            headers.forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
            ByteArrayOutputStream request = new ByteArrayOutputStream();
            request.write(head.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1));
            request.write(body);
            s.getOutputStream().write(request.toByteArray()); // one write: no Nagle wait for the body
            return read(new BufferedInputStream(s.getInputStream(), 65536));
        }
    }

    /** Reads one response: head, then the entity as its framing says (Content-Length, chunked, or to the close). */
    static Response read(InputStream in) throws IOException {
        String status = line(in);
        List<Header> headers = new ArrayList<>();
        for (String line = line(in); !line.isEmpty(); line = line(in)) {
            int colon = line.indexOf(':');
            if (colon <= 0) {
                throw new IOException("malformed header line: " + line);
            }
            headers.add(new Header(line.substring(0, colon).trim(), line.substring(colon + 1).trim()));
        }
        Response partial = new Response(status, headers, new byte[0], false);
        String length = partial.header("content-length");
        String te = partial.header("transfer-encoding");
        int code = partial.status();
        if (code == 204 || code == 304 || (code >= 100 && code < 200)) {
            return partial;
        }
        if (te != null && te.toLowerCase(Locale.ROOT).contains("chunked")) {
            return new Response(status, headers, dechunk(in), true);
        }
        if (length != null) {
            int n = Integer.parseInt(length.trim());
            byte[] entity = in.readNBytes(n);
            if (entity.length != n) {
                throw new EOFException("entity ended after " + entity.length + " of " + n + " bytes");
            }
            return new Response(status, headers, entity, false);
        }
        return new Response(status, headers, in.readAllBytes(), false);
    }

    /** The entity of a chunked body; every chunk must end with exactly CRLF, the body with the last chunk. */
    private static byte[] dechunk(InputStream in) throws IOException {
        ByteArrayOutputStream entity = new ByteArrayOutputStream();
        while (true) {
            String sizeLine = line(in);
            int semicolon = sizeLine.indexOf(';');
            int size = Integer.parseInt((semicolon < 0 ? sizeLine : sizeLine.substring(0, semicolon)).trim(), 16);
            if (size == 0) {
                while (!line(in).isEmpty()) {
                    // trailers: not part of the entity
                }
                return entity.toByteArray();
            }
            byte[] data = in.readNBytes(size);
            if (data.length != size) {
                throw new EOFException("chunk ended after " + data.length + " of " + size + " bytes");
            }
            entity.write(data);
            if (in.read() != '\r' || in.read() != '\n') {
                throw new IOException("a chunk of " + size + " bytes is not followed by CRLF");
            }
        }
    }

    /** One line up to LF, without its CRLF (or LF); EOF before any byte is an error. */
    static String line(InputStream in) throws IOException {
        ByteArrayOutputStream sb = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) >= 0 && b != '\n') {
            if (sb.size() >= MAX_LINE) {
                throw new IOException("line longer than " + MAX_LINE + " bytes");
            }
            sb.write(b);
        }
        if (b < 0 && sb.size() == 0) {
            throw new EOFException("connection closed where a line was expected");
        }
        byte[] bytes = sb.toByteArray();
        int n = bytes.length > 0 && bytes[bytes.length - 1] == '\r' ? bytes.length - 1 : bytes.length;
        return new String(bytes, 0, n, StandardCharsets.ISO_8859_1);
    }
}
