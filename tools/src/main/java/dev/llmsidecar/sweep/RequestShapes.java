package dev.llmsidecar.sweep;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Where each request's target input and output length come from: two independent {@link LengthDistribution}s drawn
 * with a seeded {@link Random}, or a JSONL trace of {@code {"input_tokens":N,"output_tokens":M}} lines replayed in
 * order and cycled. Not thread-safe: the load generator draws on one thread.
 */
public abstract class RequestShapes {

    /** Target lengths of one request, in tokens. */
    public record Shape(int inputTokens, int outputTokens) {
    }

    /** The next request's lengths. */
    public abstract Shape next();

    /** For the report. */
    public abstract String describe();

    /** Independent draws of input and output length. */
    public static RequestShapes of(LengthDistribution input, LengthDistribution output, long seed) {
        Random random = new Random(seed);
        return new RequestShapes() {
            @Override
            public Shape next() {
                return new Shape(input.sample(random), output.sample(random));
            }

            @Override
            public String describe() {
                return "input " + input.describe() + ", output " + output.describe() + ", seed " + seed;
            }
        };
    }

    /** A trace, replayed in order and cycled. */
    public static RequestShapes trace(List<Shape> shapes, String name) {
        if (shapes.isEmpty()) {
            throw new IllegalArgumentException("trace " + name + " has no requests");
        }
        List<Shape> copy = List.copyOf(shapes);
        return new RequestShapes() {
            private int i;

            @Override
            public Shape next() {
                Shape s = copy.get(i);
                i = (i + 1) % copy.size();
                return s;
            }

            @Override
            public String describe() {
                return "trace " + name + " (" + copy.size() + " requests, replayed in order and cycled)";
            }
        };
    }

    /** Reads a JSONL trace; fails with the line number on a line that is not a valid shape. */
    public static List<Shape> readTrace(Path file) throws IOException {
        return parseTrace(Files.readString(file, StandardCharsets.UTF_8), file.toString());
    }

    /**
     * Parses JSONL: one object per line with positive integers {@code input_tokens} and {@code output_tokens}
     * (other members are ignored); blank lines and lines starting with {@code #} are skipped.
     */
    public static List<Shape> parseTrace(String text, String name) {
        List<Shape> shapes = new ArrayList<>();
        int lineNo = 0;
        for (String line : text.split("\r?\n")) {
            lineNo++;
            String l = line.strip();
            if (l.isEmpty() || l.startsWith("#")) {
                continue;
            }
            JsonObject o;
            try {
                o = new JsonObject(l);
            } catch (DecodeException | ClassCastException e) {
                throw new IllegalArgumentException(name + ":" + lineNo + ": not a JSON object: " + l);
            }
            shapes.add(new Shape(positive(o, "input_tokens", name, lineNo), positive(o, "output_tokens", name,
                    lineNo)));
        }
        if (shapes.isEmpty()) {
            throw new IllegalArgumentException(name + ": no requests in the trace");
        }
        return shapes;
    }

    private static int positive(JsonObject o, String key, String name, int lineNo) {
        Object v = o.getValue(key);
        if (!(v instanceof Number n) || n.doubleValue() != Math.rint(n.doubleValue()) || n.longValue() < 1
                || n.longValue() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(name + ":" + lineNo + ": \"" + key + "\" must be a whole number >= 1, "
                    + "got " + v);
        }
        return n.intValue();
    }
}
