package dev.llmsidecar.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.json.JsonObject;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What --profile and --syscalls make of async-profiler's and strace's output. */
class ProfilingTest {

    static final List<String> STRACE = List.of(
            "% time     seconds  usecs/call     calls    errors syscall",
            "------ ----------- ----------- --------- --------- ------------------",
            " 60.00    0.060000          10      6000           epoll_wait",
            " 20.00    0.020000           5      4000           writev",
            " 15.00    0.015000           3      5000      1000 read",
            "  5.00    0.005000           1      1000           futex",
            "------ ----------- ----------- --------- --------- ------------------",
            "100.00    0.100000           6     16000      1000 total");

    @Test
    void readsStracesSummary() {
        assertThat(Profiling.parseSummary(STRACE))
                .containsExactly(Map.entry("epoll_wait", 6000L), Map.entry("writev", 4000L), Map.entry("read", 5000L),
                        Map.entry("futex", 1000L));
    }

    @Test
    void dividesSystemCallsByTheEventsRelayed() {
        Map<String, Map<String, Long>> calls = new LinkedHashMap<>();
        calls.put("nginx", Map.of("epoll_wait", 2000L, "readv", 2000L, "writev", 2000L));
        calls.put("sidecar", Profiling.parseSummary(STRACE));
        Map<String, JsonObject> phases = new LinkedHashMap<>();
        phases.put("nginx", new JsonObject().put("tokenEvents", 2000L).put("streams", 100).put("seconds", 5.0));
        phases.put("sidecar", new JsonObject().put("tokenEvents", 4000L).put("streams", 100).put("seconds", 5.0));
        String table = Profiling.syscallTable(calls, phases, 100);
        assertThat(table).contains("| system call | nginx calls | per event | sidecar calls | per event |")
                .contains("| epoll_wait | 2000 | 1.00 | 6000 | 1.50 |")
                .contains("| read | 0 | 0.00 | 5000 | 1.25 |")
                .contains("| **all** | 6000 | 3.00 | 16000 | 4.00 |")
                .contains("sidecar: 4000 events, 100 streams, 5.0 s");
        assertThat(table.lines().filter(l -> l.startsWith("| **reads**")).findFirst().orElseThrow())
                .endsWith("| 2000 | 1.00 | 5000 | 1.25 |");
    }

    @Test
    void topFramesAreTheSelfTimeOfCollapsedStacks() {
        String top = Profiling.topFrames(List.of("a;b;c 30", "a;b 10", "x;c 20", "bad line"), 2, "samples");
        assertThat(top).startsWith("60 samples").contains("| c | 50 | 83.3 |").contains("| b | 10 | 16.7 |");
    }

    @Test
    void samplesAreGroupedByThreadNameWithoutItsNumbers() {
        String t = Profiling.byThread(List.of("[vert.x-eventloop-thread-0 tid=12];a;b 30",
                "[vert.x-eventloop-thread-1 tid=13];a 10", "[C2 CompilerThread0 tid=9];c 20"), "bytes");
        assertThat(t).contains("| threads | bytes | share % |").contains("| [vert.x-eventloop-thread-N] | 40 | 66.7 |").contains("| [CN CompilerThreadN] | 20 | 33.3 |");
    }

    @Test
    void onlyTheEventsAsyncProfilerIsAskedFor() {
        assertThat(Profiling.event("alloc")).isEqualTo("alloc");
        assertThatThrownBy(() -> Profiling.event("itimer")).isInstanceOf(IllegalArgumentException.class);
    }
}
