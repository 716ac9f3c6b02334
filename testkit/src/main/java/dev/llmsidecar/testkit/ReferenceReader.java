package dev.llmsidecar.testkit;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The reference a timing test measures the sidecar against: a separate process that reads the same engine directly,
 * at the same time and with the same reader code ({@link RawHttp}) as the test's client.
 * What the scheduler does to it (another process keeping a core busy, the test's own load) it does to the sidecar
 * too; what it cannot suffer is the sidecar's own work. A timing test bounds the sidecar's delay beyond this
 * reader's delay, so on a quiet machine, where that delay is near zero, the bound is as strict as it is alone.
 *
 * <p>Run as {@code java -cp <testkit> dev.llmsidecar.testkit.ReferenceReader <port> <path> <body> <warm-up>
 * <max-requests> <max-seconds> <readers> <pause-ms>}: {@code readers} streams at a time, each one after another with
 * a pause between them (so that the reference does not itself load an engine that computes); {@code %d} in the body
 * is replaced by the request's number. It prints
 * {@code ready} after the warm-up requests, then one line per request:
 * {@code request <n> <sent> <last byte> [c<arrival> ...] [t<arrival>:<engine ms> ...]} in {@link System#nanoTime()}
 * (one monotonic clock for every process of the machine): {@code c} is the arrival of each event with content, in
 * order; {@code t} an event that carried llama.cpp's {@code timings} (asked for with {@code timings_per_token}): when
 * it arrived, and when the engine made it ({@code prompt_ms + predicted_ms}, from its own start of the request). It stops after the
 * maximum requests or seconds, or when its standard input closes.
 */
public final class ReferenceReader {

    /** A content token in a chat or completion chunk: the sidecar's first-token rule, read the same way. */
    public static final Pattern FIRST_CONTENT = Pattern.compile("\"(?:content|text)\":\"[^\"]");
    static final Pattern TIMINGS = Pattern.compile(
            "\"timings\":\\{[^}]*?\"prompt_ms\":([0-9.eE+-]+)[^}]*?\"predicted_ms\":([0-9.eE+-]+)");

    static volatile boolean stopped;

    private ReferenceReader() {
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        String path = args[1];
        String body = args[2];
        int warmUp = Integer.parseInt(args[3]);
        int maxRequests = Integer.parseInt(args[4]);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(args[5]));
        int readers = Integer.parseInt(args[6]);
        long pauseMillis = Long.parseLong(args[7]);
        Thread stdinWatch = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // only the end matters
                }
            } catch (IOException e) {
                // the end as well
            }
            stopped = true;
        }, "stdin-watch");
        stdinWatch.setDaemon(true);
        stdinWatch.start();
        for (int i = 0; i < warmUp; i++) {
            RawHttp.post(port, path, body.replace("%d", "warm-up " + i), Map.of());
        }
        System.out.println("ready");
        System.out.flush();
        AtomicInteger next = new AtomicInteger();
        Thread[] threads = new Thread[readers];
        for (int t = 0; t < readers; t++) {
            threads[t] = new Thread(() -> {
                for (int n; (n = next.getAndIncrement()) < maxRequests && System.nanoTime() < deadline && !stopped;) {
                    try {
                        String line = line(n, RawHttp.post(port, path, body.replace("%d", Integer.toString(n)),
                                Map.of()));
                        synchronized (System.out) {
                            System.out.println(line);
                            System.out.flush();
                        }
                        Thread.sleep(pauseMillis);
                    } catch (IOException e) {
                        synchronized (System.out) {
                            System.out.println("failed " + n + " " + e);
                        }
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "reader-" + t);
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
    }

    static String line(int n, RawHttp.Response r) {
        StringBuilder line = new StringBuilder("request ").append(n).append(' ').append(r.sentNanos()).append(' ')
                .append(r.lastByteNanos());
        String text = r.latin1();
        Matcher content = FIRST_CONTENT.matcher(text);
        while (content.find()) {
            line.append(" c").append(r.arrivalOf(content.end() - 1));
        }
        Matcher m = TIMINGS.matcher(text);
        while (m.find()) {
            double engineMs = Double.parseDouble(m.group(1)) + Double.parseDouble(m.group(2));
            line.append(" t").append(r.arrivalOf(m.end() - 1)).append(':').append(engineMs);
        }
        return line.toString();
    }

    /**
     * One request as the reference read it: when it was sent and its last byte arrived, when each event with
     * content arrived, and each event that carried llama.cpp's timings, with the engine's time of making it.
     */
    public record Reading(int n, long sentNanos, long lastByteNanos, long[] contentArrivals, long[] timedArrivals,
            double[] engineMs) {

        static Reading parse(String line) {
            String[] f = line.split(" ");
            List<Long> content = new ArrayList<>();
            List<Long> timed = new ArrayList<>();
            List<Double> engine = new ArrayList<>();
            for (int i = 4; i < f.length; i++) {
                if (f[i].startsWith("c")) {
                    content.add(Long.parseLong(f[i].substring(1)));
                } else {
                    String[] pair = f[i].substring(1).split(":");
                    timed.add(Long.parseLong(pair[0]));
                    engine.add(Double.parseDouble(pair[1]));
                }
            }
            return new Reading(Integer.parseInt(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]),
                    content.stream().mapToLong(Long::longValue).toArray(),
                    timed.stream().mapToLong(Long::longValue).toArray(),
                    engine.stream().mapToDouble(Double::doubleValue).toArray());
        }

        /**
         * The delay of each read of an event beyond this request's best (ms), from llama.cpp's {@code timings}: an
         * event's arrival less the engine's time of making it is one unknown offset (when the engine began the
         * request) plus that read's delay, so the least of them is the offset plus the least delay, and an arrival
         * less its engine time less that least is the delay the scheduler gave the read.
         */
        public double[] llamaDelaysMs() {
            if (engineMs.length == 0) {
                throw new IllegalStateException("no llama.cpp timings in reference request " + n
                        + ": ask for them with \"timings_per_token\":true");
            }
            double[] offsets = new double[engineMs.length];
            double least = Double.MAX_VALUE;
            for (int i = 0; i < engineMs.length; i++) {
                offsets[i] = timedArrivals[i] / 1e6 - engineMs[i];
                least = Math.min(least, offsets[i]);
            }
            for (int i = 0; i < offsets.length; i++) {
                offsets[i] -= least;
            }
            return offsets;
        }
    }

    /** A reference reader running in its own JVM, stopped by its PID. */
    public static final class Started implements AutoCloseable {
        final Processes.Running running;

        Started(Processes.Running running) {
            this.running = running;
        }

        /**
         * Stops it once it has read at least {@code atLeast} requests (waiting at most 30 s for them: a run shorter
         * than the reference's requests still gets a distribution) and returns what it read.
         */
        public List<Reading> stop(int atLeast) throws Exception {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (running.lines.stream().filter(l -> l.startsWith("request ")).count() < atLeast
                    && System.nanoTime() < deadline && running.process.isAlive()) {
                Thread.sleep(20);
            }
            return stop();
        }

        /** Stops it (its standard input closes, the request under way ends) and returns what it read. */
        public List<Reading> stop() throws Exception {
            running.process.getOutputStream().close();
            boolean ended = running.awaitEnd(Duration.ofSeconds(70));
            close();
            if (!ended) {
                throw new IllegalStateException("the reference reader did not stop: " + running.lines);
            }
            List<Reading> readings = new ArrayList<>();
            for (String line : running.lines) {
                if (line.startsWith("request ")) {
                    readings.add(Reading.parse(line));
                }
            }
            return readings;
        }

        @Override
        public void close() throws InterruptedException {
            running.close();
        }
    }

    /**
     * Starts a reference reader (a JVM of this class path with a small heap) and waits until its warm-up requests are
     * done, so that what it reads from then on is a warm reader's.
     */
    public static Started start(int port, String path, String body, int warmUp, int maxRequests, Duration max,
            int readers, Duration pause) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classPath = Path.of(ReferenceReader.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                .toString();
        Processes.Running running = new Processes.Running(List.of(java, "-Xmx64m", "-XX:+UseSerialGC", "-cp",
                classPath, ReferenceReader.class.getName(), Integer.toString(port), path, body,
                Integer.toString(warmUp), Integer.toString(maxRequests), Long.toString(max.toSeconds()),
                Integer.toString(readers), Long.toString(pause.toMillis())), Map.of(), "reference-reader");
        Started started = new Started(running);
        try {
            running.await(Pattern.compile("^ready$"), Duration.ofSeconds(60));
        } catch (RuntimeException | InterruptedException e) {
            started.close();
            throw e;
        }
        return started;
    }
}
