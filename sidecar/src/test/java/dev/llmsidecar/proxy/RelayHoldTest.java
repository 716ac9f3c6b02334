package dev.llmsidecar.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.sim.ServedRequest;
import dev.llmsidecar.support.ProxyFixture;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.RequestOptions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The timing tests, run against the defect they exist for: every byte held 2 ms after the sidecar stamped it, on a
 * scheduled write that leaves the event loop free ({@link RelayHold}), so that nothing but the hold itself shows. Each
 * of {@link TimingAccuracyTest}'s tests must fail, on every check it keeps that a hold after the stamp reaches, and
 * not as inconclusive. Runs only in its own surefire execution (sidecar/pom.xml, {@code relay-hold}), whose JVM sets
 * {@value RelayHold#PROPERTY}; the default execution leaves it out.
 */
class RelayHoldTest {

    @Test
    void theHoldIsInForceInThisJvm() {
        assertThat(RelayHold.ON).as(RelayHold.PROPERTY + " set for this execution").isTrue();
        assertThat(RelayHold.NANOS).isEqualTo(TimeUnit.MILLISECONDS.toNanos(2));
        assertThat(RelayHold.SPIN).isFalse();
    }

    @Test
    void oneStreamAtATimeFailsOnEveryHopAfterTheStamp() {
        failsOnTheHold(1, 20, TimingAccuracyTest.ONE_STREAM);
    }

    @Test
    void hundredConcurrentStreamsFailOnEveryHopAfterTheStampKeptThere() {
        failsOnTheHold(100, 1, TimingAccuracyTest.HUNDRED_STREAMS);
    }

    /**
     * The hold covers what TimingAccuracyTest does not reach: an HTTP/2 stream (cleartext, prior knowledge), which
     * always takes the object path (the codecs, not the raw relay). Every first token reaches the client at least the
     * hold after the engine wrote it.
     */
    @Test
    void anHttp2StreamOnTheObjectPathIsHeldAsWell() throws Exception {
        try (ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults().withTiming(Duration.ofMillis(20),
                Duration.ofMillis(5)).withOutputTokens(6), Map.of())) {
            HttpClient h2 = f.vertx.createHttpClient(new HttpClientOptions().setProtocolVersion(HttpVersion.HTTP_2)
                    .setHttp2ClearTextUpgrade(false));
            try {
                for (int i = 0; i < 5; i++) {
                    int n = i;
                    long[] firstToken = {-1};
                    HttpVersion version = ProxyFixture.await(h2.request(new RequestOptions().setHost("127.0.0.1")
                            .setPort(f.proxyPort).setMethod(HttpMethod.POST).setURI("/v1/chat/completions")
                            .putHeader("content-type", "application/json"))
                            .compose(req -> req.send(Buffer.buffer("{\"model\":\"m\",\"stream\":true,"
                                    + "\"messages\":[{\"role\":\"user\",\"content\":\"hi " + n + "\"}]}")))
                            .compose(res -> {
                                res.handler(b -> {
                                    if (firstToken[0] < 0 && b.toString().contains("\"content\":\"The\"")) {
                                        firstToken[0] = System.nanoTime();
                                    }
                                });
                                return res.end().map(v -> res.version());
                            }));
                    assertThat(version).isEqualTo(HttpVersion.HTTP_2);
                    List<ServedRequest> served = f.engine.served();
                    long written = served.get(served.size() - 1).firstTokenSentNanos();
                    assertThat(firstToken[0] - written).as("engine's write to the client's read, request %d", i)
                            .isGreaterThanOrEqualTo(RelayHold.NANOS);
                }
            } finally {
                ProxyFixture.await(h2.close());
            }
        }
    }

    static void failsOnTheHold(int concurrent, int batches, TimingAccuracyTest.Bounds bounds) {
        AssertionError failure = catchThrowableOfType(
                () -> new TimingAccuracyTest().runAndCheck(concurrent, batches, bounds), AssertionError.class);
        assertThat(failure).as("TimingAccuracyTest with a 2 ms hold, %d concurrent", concurrent).isNotNull();
        assertThat(failure.getMessage()).doesNotContain("inconclusive");
        double[] limits = {bounds.relayMedian(), bounds.endMedian()};
        for (int i = 0; i < limits.length; i++) {
            if (!Double.isNaN(limits[i])) {
                assertThat(failure.getMessage()).as("failed on the check %s", TimingAccuracyTest.HOLD_CHECKS.get(i))
                        .contains(TimingAccuracyTest.HOLD_CHECKS.get(i) + " beyond");
            }
        }
    }
}
