package dev.llmsidecar.demo;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * Debian's headless Chromium driven over the DevTools protocol (a WebSocket to one page target, JSON messages): no
 * WebDriver, no downloaded browser. Started with the flags that work on a machine with a closed network, a fresh
 * profile directory and an ephemeral loopback debugging port (read back from DevToolsActivePort).
 */
final class HeadlessChromium implements AutoCloseable {

    static final Path BINARY = Path.of(System.getProperty("chromium.path", "/usr/bin/chromium"));

    private final Process process;
    private final Path profile;
    private final Path log;
    private final WebSocket socket;
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<Integer, CompletableFuture<JsonObject>> pending = new ConcurrentHashMap<>();
    /** Console errors, uncaught exceptions and browser log entries (CSP violations among them) of the page. */
    final List<String> problems = new CopyOnWriteArrayList<>();

    HeadlessChromium(int width, int height) throws Exception {
        profile = Files.createTempDirectory("llm-ui-chromium");
        log = profile.resolve("chromium.log");
        process = new ProcessBuilder(BINARY.toString(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-extensions", "--disable-default-apps", "--hide-scrollbars", "--mute-audio",
                "--user-data-dir=" + profile, "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
                "--window-size=" + width + "," + height, "about:blank")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            int port = debuggingPort(Duration.ofSeconds(30));
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            JsonObject page = null;
            long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
            while (page == null) {
                JsonArray targets = new JsonArray(http.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + "/json/list")).timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.ofString()).body());
                for (Object t : targets) {
                    if ("page".equals(((JsonObject) t).getString("type"))) {
                        page = (JsonObject) t;
                    }
                }
                if (page == null) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("no page target in " + targets);
                    }
                    Thread.sleep(100);
                }
            }
            socket = http.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(5))
                    .buildAsync(URI.create(page.getString("webSocketDebuggerUrl")), new Listener())
                    .get(10, TimeUnit.SECONDS);
            call("Runtime.enable", new JsonObject());
            call("Log.enable", new JsonObject());
            call("Page.enable", new JsonObject());
            call("Network.enable", new JsonObject());
            call("Emulation.setDeviceMetricsOverride", new JsonObject().put("width", width).put("height", height)
                    .put("deviceScaleFactor", 1).put("mobile", false));
        } catch (Exception | Error e) {
            close();
            throw e;
        }
    }

    private int debuggingPort(Duration timeout) throws Exception {
        Path file = profile.resolve("DevToolsActivePort");
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("chromium exited with " + process.exitValue() + ": " + output());
            }
            if (Files.exists(file)) {
                List<String> lines = Files.readAllLines(file);
                if (!lines.isEmpty() && !lines.get(0).isBlank()) {
                    return Integer.parseInt(lines.get(0).trim());
                }
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("chromium wrote no DevToolsActivePort within " + timeout + ": " + output());
    }

    String output() {
        try {
            return Files.exists(log) ? Files.readString(log) : "";
        } catch (IOException e) {
            return e.toString();
        }
    }

    /** Sends one DevTools command and waits (up to 30 s) for its result; a protocol error throws. */
    JsonObject call(String method, JsonObject params) throws Exception {
        int id = ids.incrementAndGet();
        CompletableFuture<JsonObject> reply = new CompletableFuture<>();
        pending.put(id, reply);
        socket.sendText(new JsonObject().put("id", id).put("method", method).put("params", params).encode(), true)
                .get(10, TimeUnit.SECONDS);
        JsonObject message = reply.get(30, TimeUnit.SECONDS);
        if (message.containsKey("error")) {
            throw new IllegalStateException(method + ": " + message.getJsonObject("error"));
        }
        return message.getJsonObject("result");
    }

    void navigate(String url) throws Exception {
        JsonObject r = call("Page.navigate", new JsonObject().put("url", url));
        if (r.containsKey("errorText")) {
            throw new IllegalStateException("navigation to " + url + " failed: " + r.getString("errorText"));
        }
    }

    /** The value of a JavaScript expression in the page (returned by value, so JSON-like values only). */
    Object evaluate(String expression) throws Exception {
        JsonObject r = call("Runtime.evaluate", new JsonObject().put("expression", expression).put("returnByValue", true));
        if (r.containsKey("exceptionDetails")) {
            throw new IllegalStateException(expression + ": " + r.getJsonObject("exceptionDetails"));
        }
        return r.getJsonObject("result").getValue("value");
    }

    /** A PNG of the whole page, as tall as its content. */
    byte[] screenshot(int width) throws Exception {
        double height = ((Number) evaluate("Math.ceil(document.body.getBoundingClientRect().bottom)")).doubleValue();
        JsonObject r = call("Page.captureScreenshot", new JsonObject().put("format", "png").put("captureBeyondViewport", true)
                .put("clip", new JsonObject().put("x", 0).put("y", 0).put("width", width).put("height", height).put("scale", 1)));
        return java.util.Base64.getDecoder().decode(r.getString("data"));
    }

    private void onMessage(JsonObject m) {
        if (m.containsKey("id")) {
            CompletableFuture<JsonObject> reply = pending.remove(m.getInteger("id"));
            if (reply != null) {
                reply.complete(m);
            }
            return;
        }
        JsonObject p = m.getJsonObject("params", new JsonObject());
        switch (m.getString("method", "")) {
            case "Runtime.exceptionThrown" -> problems.add("exception: " + p.getJsonObject("exceptionDetails"));
            case "Runtime.consoleAPICalled" -> {
                if ("error".equals(p.getString("type")) || "warning".equals(p.getString("type"))) {
                    problems.add("console." + p.getString("type") + ": " + p.getJsonArray("args"));
                }
            }
            case "Log.entryAdded" -> {
                JsonObject entry = p.getJsonObject("entry");
                // a blocked request (the failure test blocks /q/llm on purpose) is logged as a network error
                if (("error".equals(entry.getString("level")) || "warning".equals(entry.getString("level")))
                        && !"network".equals(entry.getString("source"))) {
                    problems.add("log " + entry.getString("source") + ": " + entry.getString("text"));
                }
            }
            default -> {
            }
        }
    }

    private final class Listener implements WebSocket.Listener {
        private final StringBuilder text = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            text.append(data);
            if (last) {
                onMessage(new JsonObject(text.toString()));
                text.setLength(0);
            }
            webSocket.request(1);
            return null;
        }
    }

    @Override
    public void close() {
        if (socket != null) {
            socket.abort();
        }
        List<ProcessHandle> all = new ArrayList<>(process.descendants().toList());
        all.add(process.toHandle());
        all.forEach(ProcessHandle::destroy);
        for (ProcessHandle h : all) {
            try {
                h.onExit().get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                h.destroyForcibly();
            }
        }
        try (Stream<Path> files = Files.walk(profile)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            // a temporary directory left behind is harmless
        }
    }
}
