package dev.llmsidecar.sim;

/**
 * What the simulated engine did for one request, for tests and benchmarks. Times are System.nanoTime() values.
 *
 * @param id the response id
 * @param body the request body as received
 * @param arrivalNanos request fully received
 * @param firstTokenSentNanos first token chunk written (-1: none)
 * @param lastTokenSentNanos last token chunk written (-1: none)
 * @param tokenChunksSent token chunks written
 * @param cancelled the client connection closed before the response ended
 * @param closedNanos when the engine saw the connection close (-1: not closed early)
 * @param tokenChunkSentNanos when each token chunk was written
 * @param responseBody every body byte the engine wrote, when {@link SimulatedEngine#recordResponses} is on; else
 *     null
 */
public record ServedRequest(String id, String body, long arrivalNanos, long firstTokenSentNanos,
        long lastTokenSentNanos, int tokenChunksSent, boolean cancelled, long closedNanos,
        long[] tokenChunkSentNanos, io.vertx.core.buffer.Buffer responseBody) {
}
