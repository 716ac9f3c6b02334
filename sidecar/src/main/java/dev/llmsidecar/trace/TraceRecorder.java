package dev.llmsidecar.trace;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.measure.ExchangeFollower;
import dev.llmsidecar.measure.RequestLabels;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.observe.RequestBytes;
import dev.llmsidecar.observe.RequestHead;
import dev.llmsidecar.timeline.ClampedValue;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.timeline.TokenCountSource;
import dev.llmsidecar.wire.LlmOperation;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * The trace recorder (sidecar.trace.*, docs/capacity-guide.md): one JSONL record per LLM request, with Mooncake's
 * fields as AIPerf reads them (docs/sweep.md, "Trace format"), in the rotating files of {@link TraceFiles}.
 *
 * <p><b>On the event loop</b> it only takes what it needs: at arrival the wall-clock time, the window it belongs to
 * and the session header's value; a copy of the request body (at most sidecar.trace.max-body-bytes) when it was read
 * whole; the labels and result at the end. The body and the record each go into one bounded queue; a full queue
 * (sidecar.trace.queue-capacity tasks, or sidecar.trace.queue-bytes of bodies) drops the request's record and counts
 * it ({@code llm_sidecar_trace_records_dropped_total{reason="queue_full"}}): the data path never waits.
 *
 * <p><b>On its own thread</b> (one, {@code llm-sidecar-trace}) it canonicalises the prompt ({@link Canonical}), hashes
 * it into block ids ({@link BlockHasher}), writes the record and rotates the files. When there is nothing to do it
 * looks again after {@value #IDLE_MILLIS} ms, then after twice as long each time it found nothing, up to
 * {@value #MAX_IDLE_MILLIS} ms (so an idle pod is woken a few times a second, not 50: the benchmark measured the
 * recorder's idle cost at 2.5 millicores at a fixed 20 ms); producers never signal it, and at most
 * {@value #MAX_IDLE_MILLIS} ms of arrivals wait for it after a quiet spell (well inside the queue's bounds).
 *
 * <p>Nothing of a prompt or a response reaches a file or a log: only lengths, keyed hashes, labels and timings. The
 * secret is never logged or written.
 */
public final class TraceRecorder implements ExchangeFollower, AutoCloseable {

    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(TraceRecorder.class);

    static final long IDLE_MILLIS = 20;
    static final long MAX_IDLE_MILLIS = 160;
    /** The shortest secret accepted, in bytes once decoded (256 bits, HMAC-SHA256's key size). */
    static final int MIN_SECRET_BYTES = 32;
    /** Tokens per hash id (Mooncake's block, AIPerf's default --isl-block-size). */
    static final int BLOCK_TOKENS = 512;
    /** Formats whose token counts are a usage object (or llama.cpp's timings in an OpenAI stream). */
    private static final Set<String> USAGE_FORMATS = Set.of("openai_chat", "openai_completions", "openai_responses",
            "openai_embeddings", "anthropic_messages");

    private final Path dir;
    private final String sessionHeader;
    private final int maxBodyBytes;
    private final long queueBytesLimit;
    private final double bytesPerToken;
    private final ArrayBlockingQueue<Task> queue;
    private final AtomicLong queuedBytes = new AtomicLong();
    private final TraceFiles files;
    private final TraceStats stats;
    private final BlockHasher hasher;
    private final ConversationIds conversationIds;
    private final JsonFactory json = new JsonFactory();
    private final ByteArrayOutputStream line = new ByteArrayOutputStream(1024);
    private final Thread worker;
    private final byte[] secret;
    /** The key's id in every record ({@link KeyId}): made on the recorder's thread before its first record. */
    private String keyId;
    private volatile boolean stopping;

    /** Something the recorder's thread does: hash a body, write a record. */
    private interface Task {
        void run(TraceRecorder r);

        /** Body bytes it holds (counted against sidecar.trace.queue-bytes). */
        default int heldBytes() {
            return 0;
        }
    }

    private TraceRecorder(SidecarConfig.Trace config, byte[] secret, Recorders recorders, LongSupplier nanoClock) {
        this.dir = Path.of(config.dir()).toAbsolutePath().normalize();
        this.sessionHeader = config.sessionHeader().filter(h -> !h.isBlank()).map(String::trim).orElse(null);
        this.maxBodyBytes = config.maxBodyBytes();
        this.queueBytesLimit = config.queueBytes();
        this.bytesPerToken = config.blockBytes() / (double) BLOCK_TOKENS;
        this.queue = new ArrayBlockingQueue<>(config.queueCapacity());
        this.hasher = new BlockHasher(secret, config.blockBytes());
        this.conversationIds = new ConversationIds(secret);
        this.secret = secret;
        TraceFiles[] filesRef = new TraceFiles[1];
        this.stats = new TraceStats(recorders, () -> filesRef[0] == null ? 0 : filesRef[0].openBytes(),
                () -> filesRef[0] == null ? 0 : filesRef[0].closedBytes(),
                () -> filesRef[0] != null && filesRef[0].state() == TraceFiles.State.WRITING ? 1 : 0);
        this.files = new TraceFiles(dir, config.maxFileBytes(), config.maxFileAge().toNanos(), config.maxFiles(),
                new TraceFiles.Retention(config.sharedDir().filter(d -> !d.isBlank())
                        .map(d -> Path.of(d).toAbsolutePath().normalize()).orElse(null), config.maxTotalBytes(),
                        config.reclaimAfter().toMillis()),
                stats, nanoClock);
        filesRef[0] = files;
        this.worker = new Thread(this::work, "llm-sidecar-trace");
        worker.setDaemon(true);
    }

    /**
     * Starts recording as configured: checks the settings (a message names the property, never the secret's value)
     * and starts the recorder's thread, which prepares the directory (creates it, closes files a crash left open). A
     * directory that cannot be used does not stop the proxy: the records are dropped and counted, and the recorder
     * tries again (docs/capacity-guide.md, "When the disk fails").
     */
    public static TraceRecorder start(SidecarConfig.Trace config, Recorders recorders, LongSupplier nanoClock) {
        byte[] secret = check(config);
        TraceRecorder r = new TraceRecorder(config, secret, recorders, nanoClock);
        r.worker.start();
        return r;
    }

    /**
     * As {@link #start}, but settings it refuses (no secret, a short one, a bad number) do not stop the proxy either:
     * the recorder stays off, an error names the property (never a value), {@code llm_sidecar_trace_writing} is 0 and
     * {@code llm_sidecar_trace_write_failures_total{reason="configuration"}} 1, so the shipped alert fires. Null then.
     */
    public static TraceRecorder startOrRefuse(SidecarConfig.Trace config, Recorders recorders,
            LongSupplier nanoClock) {
        try {
            return start(config, recorders, nanoClock);
        } catch (IllegalArgumentException e) {
            LOG.error("The trace recorder did not start; the proxy serves without it: " + e.getMessage());
            new TraceStats(recorders, () -> 0, () -> 0, () -> 0).writeFailed(TraceFiles.Failure.CONFIGURATION);
            return null;
        }
    }

    /** Whether records reach the files now. */
    public TraceFiles.State state() {
        return files.state();
    }

    /** The secret's bytes, once every setting was checked; a message names the property, never the secret. */
    static byte[] check(SidecarConfig.Trace config) {
        String secret = config.secret().orElse("");
        if (secret.isBlank()) {
            throw new IllegalArgumentException("sidecar.trace.enabled=true needs sidecar.trace.secret (env "
                    + "SIDECAR_TRACE_SECRET): the key of the hash ids, hex or base64 of at least " + MIN_SECRET_BYTES
                    + " random bytes, the same on every replica (e.g. openssl rand -hex 32, kept in a Secret); the "
                    + "recorder does not start without it");
        }
        byte[] bytes = decodeSecret(secret);
        if (bytes.length < MIN_SECRET_BYTES) {
            throw new IllegalArgumentException("sidecar.trace.secret decodes to fewer than " + MIN_SECRET_BYTES
                    + " bytes: a short key can be guessed (e.g. openssl rand -hex 32)");
        }
        positive("sidecar.trace.max-file-bytes", config.maxFileBytes());
        positive("sidecar.trace.max-files", config.maxFiles());
        positive("sidecar.trace.queue-capacity", config.queueCapacity());
        positive("sidecar.trace.block-bytes", config.blockBytes());
        positive("sidecar.trace.max-file-age", config.maxFileAge().toMillis());
        if (config.maxTotalBytes() < 0) {
            throw new IllegalArgumentException("sidecar.trace.max-total-bytes must be >= 0: " + config.maxTotalBytes());
        }
        if (config.reclaimAfter().compareTo(config.maxFileAge().multipliedBy(config.maxFiles())) <= 0) {
            throw new IllegalArgumentException("sidecar.trace.reclaim-after (" + config.reclaimAfter() + ") must be "
                    + "longer than sidecar.trace.max-files x max-file-age (" + config.maxFileAge()
                    .multipliedBy(config.maxFiles()) + "): a live pod's quiet directory is not a gone pod's");
        }
        if (config.maxBodyBytes() < 0 || config.queueBytes() < config.maxBodyBytes()) {
            throw new IllegalArgumentException("sidecar.trace.queue-bytes (" + config.queueBytes() + ") must be at "
                    + "least sidecar.trace.max-body-bytes (" + config.maxBodyBytes() + "), which must be >= 0");
        }
        return bytes;
    }

    /**
     * The secret's key bytes: hex (an even number of hex digits) or else base64 (standard or URL-safe, padded or
     * not). A message never quotes the value.
     */
    static byte[] decodeSecret(String secret) {
        String s = secret.strip();
        if (s.length() % 2 == 0 && s.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
            return java.util.HexFormat.of().parseHex(s);
        }
        try {
            return java.util.Base64.getDecoder().decode(s);
        } catch (IllegalArgumentException notStandard) {
            try {
                return java.util.Base64.getUrlDecoder().decode(s);
            } catch (IllegalArgumentException notUrlSafe) {
                throw new IllegalArgumentException("sidecar.trace.secret is neither hex nor base64: give at least "
                        + MIN_SECRET_BYTES + " random bytes in either (e.g. openssl rand -hex 32)");
            }
        }
    }

    private static void positive(String property, long value) {
        if (value <= 0) {
            throw new IllegalArgumentException(property + " must be positive: " + value);
        }
    }

    /** The directory of the files (what the management endpoint serves the closed ones of). */
    public Path dir() {
        return dir;
    }

    // ---------------------------------------------------------------------------------------------- event loops

    @Override
    public Followed started(RequestHead head, LlmOperation operation, long receivedNanos) {
        long arrivalMs = System.currentTimeMillis();
        String session = sessionHeader == null ? null : head.header(sessionHeader);
        return new Traced(this, files.enter(arrivalMs), arrivalMs, operation, session);
    }

    /** Takes {@code bytes} of the queue's body budget; false when it is spent. */
    private boolean reserve(int bytes) {
        if (queuedBytes.addAndGet(bytes) > queueBytesLimit) {
            queuedBytes.addAndGet(-bytes);
            return false;
        }
        return true;
    }

    private boolean offer(Task t) {
        return !stopping && queue.offer(t);
    }

    private TraceStats.Drop refusal() {
        return stopping ? TraceStats.Drop.SHUTDOWN : TraceStats.Drop.QUEUE_FULL;
    }

    /** One followed request: what the loop took, and what the recorder's thread adds. */
    private static final class Traced implements Followed, Task {
        final TraceRecorder recorder;
        final TraceFiles.Generation generation;
        final long arrivalMs;
        final LlmOperation operation;
        final String sessionValue;
        // the event loop's, read by the recorder's thread after the queue hands it over
        TraceStats.Drop bodyDropped;
        int bodyLength = -1;
        String model;
        String tenant;
        String sloClass;
        RequestResult result;
        // the recorder's thread's (set by the body's task, which the queue runs first)
        BlockHasher.Chain chain;
        int canonicalBytes = -1;
        // the event loop's (sidecar.conversations): its conversation's number in this process, 0 for none; its turn
        int conversation;
        int turn;

        Traced(TraceRecorder recorder, TraceFiles.Generation generation, long arrivalMs, LlmOperation operation,
                String sessionValue) {
            this.recorder = recorder;
            this.generation = generation;
            this.arrivalMs = arrivalMs;
            this.operation = operation;
            this.sessionValue = sessionValue;
        }

        @Override
        public void requestBody(RequestBytes body, String model) {
            bodyLength = body.length();
            int n = Math.min(bodyLength, recorder.maxBodyBytes);
            if (!recorder.reserve(n)) {
                bodyDropped = recorder.refusal();
                return;
            }
            byte[] copy = new byte[n];
            body.copyTo(copy, n);
            if (!recorder.offer(new Body(this, copy, model, n == bodyLength))) {
                recorder.queuedBytes.addAndGet(-n);
                bodyDropped = recorder.refusal();
            }
        }

        @Override
        public void conversation(int conversation, int turn) {
            this.conversation = conversation;
            this.turn = turn;
        }

        @Override
        public void finished(RequestLabels labels, RequestResult result) {
            if (bodyDropped != null) {
                recorder.stats.dropped(bodyDropped);
                generation.leave();
                return;
            }
            this.model = labels.model();
            this.tenant = labels.tenant();
            this.sloClass = labels.sloClass();
            this.result = result;
            if (!recorder.offer(this)) {
                recorder.stats.dropped(recorder.refusal());
                generation.leave();
            }
        }

        @Override
        public void run(TraceRecorder r) {
            try {
                r.write(this);
            } finally {
                generation.leave();
            }
        }
    }

    /** A request body to canonicalise and hash. */
    private record Body(Traced traced, byte[] body, String model, boolean whole) implements Task {
        @Override
        public void run(TraceRecorder r) {
            Canonical.Bytes canonical = Canonical.of(r.json, traced.operation.path(), body, body.length);
            traced.canonicalBytes = canonical.length();
            traced.chain = r.hasher.chain(traced.operation.path() + "\0" + model, canonical.array(),
                    canonical.length(), whole);
        }

        @Override
        public int heldBytes() {
            return body.length;
        }
    }

    // --------------------------------------------------------------------------------------- the recorder's thread

    private void work() {
        keyId = KeyId.of(secret); // a deliberately slow derivation: once, here, not on the starting thread
        long idleMillis = IDLE_MILLIS;
        while (true) {
            Task t = queue.poll();
            if (t == null) {
                files.idle();
                if (stopping && queue.isEmpty()) {
                    break;
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(idleMillis));
                idleMillis = Math.min(MAX_IDLE_MILLIS, idleMillis * 2);
                continue;
            }
            idleMillis = IDLE_MILLIS;
            queuedBytes.addAndGet(-t.heldBytes());
            try {
                t.run(this);
            } catch (RuntimeException e) {
                // a bug must not stop the recorder: that record is lost (and counted), a body is left unhashed
                if (t instanceof Traced) {
                    stats.dropped(TraceStats.Drop.WRITE_FAILED);
                }
            }
        }
        files.closeAll();
    }

    /** Writes one request's record into the file of the window it arrived in (counted there, written or dropped). */
    private void write(Traced t) {
        TraceFiles.Ready ready = files.prepare(t.generation);
        if (ready != TraceFiles.Ready.READY) {
            stats.dropped(ready == TraceFiles.Ready.LATE ? TraceStats.Drop.LATE : TraceStats.Drop.WRITE_FAILED);
            return;
        }
        long base = t.generation.base;
        RequestResult r = t.result;
        String countSource = USAGE_FORMATS.contains(t.operation.format().name()) ? "usage" : "format";
        long input;
        String inputSource;
        if (r.promptTokens() > 0) {
            input = r.promptTokens();
            inputSource = countSource;
        } else {
            long bytes = t.canonicalBytes >= 0 ? t.canonicalBytes : Math.max(0, t.bodyLength);
            input = Math.max(1, (long) Math.ceil(bytes / bytesPerToken));
            inputSource = "estimate";
        }
        input = Math.min(input, ClampedValue.MAX_TOKENS); // block ids are allocated per 512 of them
        String outputSource = r.outputTokenSource() == TokenCountSource.USAGE ? countSource : "estimate";
        long[] ids = hasher.ids(t.chain, (int) ((input + BLOCK_TOKENS - 1) / BLOCK_TOKENS));
        try {
            line.reset();
            try (JsonGenerator g = json.createGenerator(line)) {
                g.writeStartObject();
                g.writeNumberField("timestamp", Math.max(0, t.arrivalMs - base));
                g.writeNumberField("input_length", input);
                g.writeNumberField("output_length", Math.max(0, r.outputTokens()));
                if (r.reasoningTokens() >= 0) {
                    g.writeNumberField("reasoning_length", Math.min(r.reasoningTokens(), Math.max(0,
                            r.outputTokens())));
                }
                g.writeArrayFieldStart("hash_ids");
                for (long id : ids) {
                    g.writeNumber(id);
                }
                g.writeEndArray();
                if (t.sessionValue != null && !t.sessionValue.isEmpty()) {
                    g.writeStringField("session_id", hasher.session(t.sessionValue));
                }
                if (t.conversation != 0) {
                    g.writeStringField("conversation_id", conversationIds.of(t.conversation));
                    if (t.turn > 0) {
                        g.writeNumberField("turn", t.turn);
                    }
                }
                g.writeNumberField("arrival_unix_ms", t.arrivalMs);
                g.writeStringField("model", t.model);
                g.writeStringField("operation", t.operation.label());
                g.writeStringField("slo_class", t.sloClass);
                if (t.tenant != null && !t.tenant.isEmpty()) {
                    g.writeStringField("tenant", t.tenant);
                }
                g.writeStringField("outcome", r.outcome().label());
                millis(g, "ttft_ms", r.ttftNanos());
                millis(g, "tpot_ms", r.tpotNanos());
                millis(g, "e2e_ms", r.e2eNanos());
                g.writeStringField("input_length_source", inputSource);
                g.writeStringField("output_length_source", outputSource);
                g.writeStringField("key_id", keyId);
                g.writeEndObject();
            }
            line.write('\n');
        } catch (IOException e) {
            stats.dropped(TraceStats.Drop.WRITE_FAILED); // into memory: does not happen
            return;
        }
        files.append(t.generation, line.toByteArray(), line.size());
        if ("usage".equals(inputSource) && t.chain != null && t.chain.whole() && t.canonicalBytes > 0) {
            stats.prompt(t.canonicalBytes, input);
        }
    }

    /** A duration as milliseconds with three decimals; left out when it did not happen (negative). */
    private static void millis(JsonGenerator g, String field, long nanos) throws IOException {
        if (nanos < 0) {
            return;
        }
        g.writeFieldName(field);
        g.writeNumber(millisText(nanos));
    }

    /** Nanoseconds (not negative) as milliseconds with three decimals: 1 050 000 is "1.050". */
    static String millisText(long nanos) {
        long micros = Math.round(nanos / 1000.0);
        int fraction = (int) (micros % 1000);
        return micros / 1000 + (fraction < 10 ? ".00" : fraction < 100 ? ".0" : ".") + fraction;
    }

    /**
     * Stops recording: what is queued is written, every file is closed (renamed to its final name); requests ending
     * later are dropped ({@code shutdown}). Waits up to 10 s.
     */
    @Override
    public void close() {
        stopping = true;
        LockSupport.unpark(worker);
        try {
            worker.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * For tests: holds the recorder's thread (it takes a task that waits) until the returned latch is counted down,
     * so the queue fills as it would behind a slow disk.
     */
    java.util.concurrent.CountDownLatch hold() throws InterruptedException {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch holding = new java.util.concurrent.CountDownLatch(1);
        Task wait = r -> {
            holding.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        if (!queue.offer(wait) || !holding.await(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the recorder's thread did not take the holding task");
        }
        return release;
    }

    /**
     * Waits (up to 10 s) until the recorder's thread has handled everything queued before this call and written it
     * to its files (flushed, not closed); false when it did not come round in time.
     */
    public boolean sync() {
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        Task flush = r -> {
            r.files.idle();
            done.countDown();
        };
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!queue.offer(flush)) {
            if (System.nanoTime() > deadline || stopping) {
                return false;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
        LockSupport.unpark(worker); // a caller that waits need not wait out the thread's idle pause
        try {
            return done.await(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
