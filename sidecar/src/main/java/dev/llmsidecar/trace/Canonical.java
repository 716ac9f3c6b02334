package dev.llmsidecar.trace;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.llmsidecar.wire.JsonReads;
import java.io.EOFException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * A request's prompt as canonical bytes: what the hash ids are made of. The members of the request body that hold the
 * prompt, per route ({@link #sections}), are parsed (Jackson) and written out again in a fixed form, so that neither
 * the raw JSON's whitespace, escapes or member order nor the request's other members (model, stream, max_tokens,
 * sampling) change them:
 *
 * <ul>
 *   <li>the sections in their fixed order, each as {@code name:} + its value + a newline;
 *   <li>a string as its text (UTF-8); a number, true, false, null as their JSON text;
 *   <li>an array as {@code [} + each element and a newline + {@code ]};
 *   <li>an object as <code>{</code> + each member, sorted by name, as {@code name:} + value + a newline + <code>}</code>
 *       (a chat message: <code>{content:...\nrole:user\n}</code>).
 * </ul>
 *
 * A body cut short (only its first sidecar.trace.max-body-bytes are kept) gives what was read up to the cut; a body
 * that is not a JSON object gives its bytes as they are. Runs on the recorder's thread only.
 */
final class Canonical {

    /** Deeper values are left out (a marker stands for them): Jackson's own limit is 1000, our stack is small. */
    static final int MAX_DEPTH = 64;

    private Canonical() {
    }

    /**
     * The members of a request body that hold its prompt, in the order they are hashed (tools and system text come
     * before the messages, as chat templates put them), by route path (wire/LlmRoutes); null: the whole body.
     */
    static List<String> sections(String path) {
        return switch (path) {
            case "/v1/chat/completions", "/api/chat" -> List.of("tools", "messages");
            case "/v1/completions", "/completion", "/completions" -> List.of("prompt");
            case "/v1/responses" -> List.of("instructions", "tools", "input");
            case "/v1/embeddings" -> List.of("input");
            case "/v1/messages" -> List.of("system", "tools", "messages");
            case "/api/generate" -> List.of("system", "prompt");
            case "/generate_stream", "/generate" -> List.of("inputs");
            default -> null;
        };
    }

    /** The canonical prompt of {@code body[0, length)} sent to {@code path}. */
    static Bytes of(JsonFactory json, String path, byte[] body, int length) {
        List<String> sections = sections(path);
        Bytes out = JsonReads.read(json, body, 0, length, p -> read(p, sections));
        if (out == null) {
            // not a JSON object: its bytes as they are
            out = new Bytes(length);
            out.write(body, 0, length);
        }
        return out;
    }

    private static Bytes read(JsonParser p, List<String> sections) throws IOException {
        if (p.nextToken() != JsonToken.START_OBJECT) {
            return null;
        }
        Bytes out = new Bytes(256);
        if (sections == null) {
            try {
                value(p, out, 0);
            } catch (IOException | RuntimeException cut) {
                // what was read up to the cut (value() wrote it)
            }
            return out;
        }
        Bytes[] found = new Bytes[sections.size()];
        try {
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                next(p);
                int i = sections.indexOf(name);
                if (i < 0 || found[i] != null) {
                    p.skipChildren();
                    continue;
                }
                found[i] = new Bytes(256);
                value(p, found[i], 0);
            }
        } catch (IOException | RuntimeException cut) {
            // a body cut at max-body-bytes, or bad JSON past the prompt: the prompt as far as it was read
        }
        for (int i = 0; i < found.length; i++) {
            if (found[i] != null) {
                out.writeAscii(sections.get(i));
                out.write(':');
                out.write(found[i]);
                out.write('\n');
            }
        }
        return out;
    }

    /** Writes the value the parser is on (its first token) and leaves the parser on its last token. */
    private static void value(JsonParser p, Bytes out, int depth) throws IOException {
        JsonToken t = p.currentToken();
        if (t == null) {
            throw new EOFException("end of a cut body");
        }
        if ((t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) && depth >= MAX_DEPTH) {
            p.skipChildren();
            out.writeAscii("{...}");
            return;
        }
        switch (t) {
            case START_OBJECT -> {
                List<Member> members = new ArrayList<>();
                try {
                    while (next(p) == JsonToken.FIELD_NAME) {
                        Member m = new Member(p.currentName(), new Bytes(64));
                        members.add(m);
                        next(p);
                        value(p, m.value, depth + 1);
                    }
                } finally {
                    members.sort(Comparator.comparing(Member::name));
                    out.write('{');
                    for (Member m : members) {
                        out.writeUtf8(m.name);
                        out.write(':');
                        out.write(m.value);
                        out.write('\n');
                    }
                    out.write('}');
                }
            }
            case START_ARRAY -> {
                out.write('[');
                try {
                    while (next(p) != JsonToken.END_ARRAY) {
                        value(p, out, depth + 1);
                        out.write('\n');
                    }
                } finally {
                    out.write(']');
                }
            }
            case VALUE_STRING -> out.writeUtf8(p.getTextCharacters(), p.getTextOffset(), p.getTextLength());
            default -> out.writeUtf8(p.getText());
        }
    }

    private static JsonToken next(JsonParser p) throws IOException {
        JsonToken t = p.nextToken();
        if (t == null) {
            throw new EOFException("end of a cut body");
        }
        return t;
    }

    private record Member(String name, Bytes value) {
    }

    /** A growable byte array (the canonical prompt, or a part of it). */
    static final class Bytes {
        private byte[] a;
        private int n;

        Bytes(int capacity) {
            a = new byte[Math.max(16, capacity)];
        }

        int length() {
            return n;
        }

        byte[] array() {
            return a;
        }

        byte[] toArray() {
            return Arrays.copyOf(a, n);
        }

        private void room(int more) {
            if (n + more > a.length) {
                a = Arrays.copyOf(a, Math.max(a.length * 2, n + more));
            }
        }

        void write(int b) {
            room(1);
            a[n++] = (byte) b;
        }

        void write(byte[] b, int off, int len) {
            room(len);
            System.arraycopy(b, off, a, n, len);
            n += len;
        }

        void write(Bytes b) {
            write(b.a, 0, b.n);
        }

        void writeAscii(String s) {
            room(s.length());
            for (int i = 0; i < s.length(); i++) {
                a[n++] = (byte) s.charAt(i);
            }
        }

        void writeUtf8(String s) {
            char[] c = s.toCharArray();
            writeUtf8(c, 0, c.length);
        }

        /** UTF-8 of UTF-16 text; an unpaired surrogate is written as '?'. */
        void writeUtf8(char[] c, int off, int len) {
            room(len * 3);
            int end = off + len;
            for (int i = off; i < end; i++) {
                char ch = c[i];
                if (ch < 0x80) {
                    a[n++] = (byte) ch;
                } else if (ch < 0x800) {
                    a[n++] = (byte) (0xC0 | (ch >> 6));
                    a[n++] = (byte) (0x80 | (ch & 0x3F));
                } else if (Character.isHighSurrogate(ch) && i + 1 < end && Character.isLowSurrogate(c[i + 1])) {
                    int cp = Character.toCodePoint(ch, c[++i]);
                    room(4);
                    a[n++] = (byte) (0xF0 | (cp >> 18));
                    a[n++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
                    a[n++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
                    a[n++] = (byte) (0x80 | (cp & 0x3F));
                } else if (Character.isSurrogate(ch)) {
                    a[n++] = '?';
                } else {
                    a[n++] = (byte) (0xE0 | (ch >> 12));
                    a[n++] = (byte) (0x80 | ((ch >> 6) & 0x3F));
                    a[n++] = (byte) (0x80 | (ch & 0x3F));
                }
            }
        }
    }
}
