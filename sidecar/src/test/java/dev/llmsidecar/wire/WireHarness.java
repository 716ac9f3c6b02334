package dev.llmsidecar.wire;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.support.Reads;
import dev.llmsidecar.support.RecordingSink;
import io.vertx.core.MultiMap;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * Feeds recorded-shape response bodies to a decoder cut into reads, one timestamp per read (1000, 1001, ...),
 * and checks that every byte is forwarded unchanged.
 */
public final class WireHarness {

    public static final long T0 = 1000;

    private WireHarness() {
    }

    public static UpstreamResponse response(String contentType) {
        return response(contentType, MultiMap.caseInsensitiveMultiMap());
    }

    public static UpstreamResponse response(String contentType, MultiMap headers) {
        return new UpstreamResponse(contentType, headers::get, false, 1 << 20, 1 << 24);
    }

    /** Feeds {@code bytes} cut at the given offsets; returns the forwarded bytes. */
    public static byte[] feed(StreamDecoder decoder, byte[] bytes, int... cuts) {
        Reads reads = new Reads();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int from = 0;
        long t = T0;
        for (int cut : cuts) {
            out.writeBytes(Reads.drain(decoder.onChunk(reads.read(bytes, from, cut), t++)));
            from = cut;
        }
        out.writeBytes(Reads.drain(decoder.onChunk(reads.read(bytes, from, bytes.length), t++)));
        out.writeBytes(Reads.drain(decoder.onEnd(t)));
        reads.assertAllReleased();
        return out.toByteArray();
    }

    /** A fresh sink fed {@code s} through {@code format}'s decoder, cut at {@code cuts}; every byte forwarded. */
    public static RecordingSink decode(WireFormat format, UpstreamResponse response, String s, int... cuts) {
        RecordingSink sink = new RecordingSink();
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        assertThat(feed(format.decoder(sink, response), bytes, cuts)).as("forwarded bytes").isEqualTo(bytes);
        return sink;
    }

    /** {@link #everySplit(String, Function, BiConsumer)} with {@code format}'s decoder for {@code contentType}. */
    public static void everySplit(String stream, WireFormat format, String contentType,
            BiConsumer<Integer, RecordingSink> check) {
        everySplit(stream, sink -> format.decoder(sink, response(contentType)), check);
    }

    /** {@link #perEvent(String, String, Function)} with {@code format}'s decoder for {@code contentType}. */
    public static RecordingSink perEvent(String stream, String separator, WireFormat format, String contentType) {
        return perEvent(stream, separator, sink -> format.decoder(sink, response(contentType)));
    }

    /** The prompt, completion and cached counts at once ({@code cached} -1: not reported). */
    public static void assertUsage(RecordingSink sink, long prompt, long completion, long cached) {
        assertThat(sink.usage).isNotNull();
        assertThat(new Usage(sink.usage.promptTokens(), sink.usage.completionTokens(), sink.usage.cachedTokens()))
                .isEqualTo(new Usage(prompt, completion, cached));
    }

    /**
     * For every cut point 1..n-1: a fresh sink and decoder, the stream fed in two reads (timestamps 1000 and
     * 1001), the forwarded bytes compared with the input, then {@code check(cut, sink)}.
     */
    public static void everySplit(String stream, Function<RecordingSink, StreamDecoder> decoder,
            BiConsumer<Integer, RecordingSink> check) {
        byte[] bytes = stream.getBytes(StandardCharsets.UTF_8);
        for (int cut = 1; cut < bytes.length; cut++) {
            RecordingSink sink = new RecordingSink();
            byte[] out = feed(decoder.apply(sink), bytes, cut);
            assertThat(out).as("forwarded bytes, cut at %d", cut).isEqualTo(bytes);
            check.accept(cut, sink);
        }
    }

    /** One read per event: the whole stream cut at every event end (SSE blank line or NDJSON newline). */
    public static RecordingSink perEvent(String stream, String separator, Function<RecordingSink, StreamDecoder> decoder) {
        byte[] bytes = stream.getBytes(StandardCharsets.UTF_8);
        java.util.List<Integer> cuts = new java.util.ArrayList<>();
        int from = 0;
        int at;
        while ((at = stream.indexOf(separator, from)) >= 0 && at + separator.length() < stream.length()) {
            from = at + separator.length();
            cuts.add(byteOffset(stream, from));
        }
        RecordingSink sink = new RecordingSink();
        byte[] out = feed(decoder.apply(sink), bytes, cuts.stream().mapToInt(Integer::intValue).toArray());
        assertThat(out).isEqualTo(bytes);
        return sink;
    }

    /** Byte offset just past the end of the event containing {@code marker}: after the next {@code separator}. */
    public static int endOfEventWith(String stream, String marker, String separator) {
        int at = stream.indexOf(marker);
        assertThat(at).as("marker %s", marker).isNotNegative();
        return byteOffset(stream, stream.indexOf(separator, at) + separator.length());
    }

    /** The timestamp an event ending at {@code end} gets when the stream is cut once at {@code cut}. */
    public static long stamp(int end, int cut) {
        return end <= cut ? T0 : T0 + 1;
    }

    static int byteOffset(String s, int charIndex) {
        return s.substring(0, charIndex).getBytes(StandardCharsets.UTF_8).length;
    }
}
