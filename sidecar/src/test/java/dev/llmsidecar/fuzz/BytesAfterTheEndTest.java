package dev.llmsidecar.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * An engine that sends bytes after the end of a chunked body, in the same read or in a later one (when the connection
 * is already back in the pool): the connection must close and be counted, never carry the next client's request with
 * those bytes in front of its answer. RawRelayFuzzTest found the later-read case on 28 Nov 2026 (seed
 * {@code bytes-after-the-end-in-later-reads}): the response decoder kept the stray bytes as the beginning of the next
 * response, and the next client, on the same pooled connection, got a broken answer.
 */
class BytesAfterTheEndTest {

    @ParameterizedTest(name = "after the end: \"{0}\", read lengths {1}, raw relay {2}")
    @CsvSource({
            "X, 1, true", "X, 100, true", "X, 6 1, true", "X, 5 1, true",
            "X, 1, false", "X, 100, false", "X, 6 1, false", "X, 5 1, false",
            "XY, 1, true", "XY, 6 1, false", "HTTP/1.1 200 OK, 6 1, true", "HTTP/1.1 200 OK, 6 1, false"})
    void theConnectionClosesAndTheNextRequestGetsItsOwnAnswer(String after, String lengths, boolean raw) {
        byte[] body = ("00\r\n\r\n" + after).getBytes(StandardCharsets.ISO_8859_1);
        int[] reads = Arrays.stream(lengths.split(" ")).mapToInt(Integer::parseInt).toArray();
        RawRelayFuzzTest.Outcome out = RawRelayFuzzTest.run(body, new ReadSplits(reads), raw, false, true);
        assertThat(out.ended()).isEqualTo("OK 200");
        assertThat(out.pooled()).as("back in the pool").isFalse();
        assertThat(out.anomalies()).as("counted as a framing anomaly").isEqualTo(1);
        assertThat(out.next()).as("the next request's own answer").isEqualTo(RawRelayFuzzTest.NEXT_ENTITY);
    }

    @ParameterizedTest(name = "nothing after the end, read lengths {0}, raw relay {1}")
    @CsvSource({"1, true", "100, true", "1, false", "100, false"})
    void aCleanEndKeepsTheConnection(String lengths, boolean raw) {
        byte[] body = "00\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1);
        int[] reads = Arrays.stream(lengths.split(" ")).mapToInt(Integer::parseInt).toArray();
        RawRelayFuzzTest.Outcome out = RawRelayFuzzTest.run(body, new ReadSplits(reads), raw, false, true);
        assertThat(out.pooled()).isTrue();
        assertThat(out.anomalies()).isZero();
        assertThat(out.next()).isEqualTo(RawRelayFuzzTest.NEXT_ENTITY);
    }
}
