package dev.llmsidecar.sweep;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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

    /** Reads a length-only JSONL trace; fails with the line number on a line that is not a valid shape. */
    public static List<Shape> readTrace(Path file) throws IOException {
        return parseTrace(Files.readString(file, StandardCharsets.UTF_8), file.toString());
    }

    /**
     * Parses a length-only trace ({@link TraceFile}): one object per line with positive integers
     * {@code input_tokens} and {@code output_tokens} (other members are ignored); blank lines and lines starting with
     * {@code #} are skipped.
     */
    public static List<Shape> parseTrace(String text, String name) {
        TraceFile t = TraceFile.parse(text, name);
        if (t.recorded()) {
            throw new IllegalArgumentException(name + ": a recorded trace (timestamp, hash_ids), not a length-only one");
        }
        return t.shapes();
    }
}
