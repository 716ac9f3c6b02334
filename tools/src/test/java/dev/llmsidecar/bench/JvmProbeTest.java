package dev.llmsidecar.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The sidecar's JVM as the benchmark reads it: its /q/metrics lines, its safepoint log, Quarkus's event-loop rule. */
class JvmProbeTest {

    @TempDir
    Path dir;

    static JsonObject counters(String... lines) {
        JsonObject g = new JsonObject().put("minorCount", 0.0).put("minorSeconds", 0.0).put("majorCount", 0.0)
                .put("majorSeconds", 0.0).put("allocatedBytes", 0.0).put("edenUsedBytes", 0.0)
                .put("heapMaxBytes", 0.0).put("engineScrapesOk", 0.0).put("uptimeSeconds", Double.NaN);
        for (String l : lines) {
            JvmProbe.read(g, l);
        }
        return g;
    }

    @Test
    void readsTheMicrometerJvmSeries() {
        JsonObject g = counters(
                "jvm_gc_pause_seconds_count{action=\"end of minor GC\",cause=\"Allocation Failure\",gc=\"Copy\"} 4",
                "jvm_gc_pause_seconds_sum{action=\"end of minor GC\",cause=\"Allocation Failure\",gc=\"Copy\"} 0.02",
                "jvm_gc_pause_seconds_count{action=\"end of major GC\",cause=\"Allocation Failure\",gc=\"MarkSweepCompact\"} 1",
                "jvm_gc_memory_allocated_bytes_total 2.2413312E7",
                "jvm_memory_used_bytes{area=\"heap\",id=\"Eden Space\"} 8027640.0",
                "jvm_memory_used_bytes{area=\"heap\",id=\"Tenured Gen\"} 7680416.0",
                "jvm_memory_max_bytes{area=\"heap\",id=\"Eden Space\"} 1.1206656E7",
                "jvm_memory_max_bytes{area=\"heap\",id=\"Survivor Space\"} 1376256.0",
                "jvm_memory_max_bytes{area=\"heap\",id=\"Tenured Gen\"} 2.7983872E7",
                "jvm_memory_max_bytes{area=\"nonheap\",id=\"Metaspace\"} 1.34217728E8",
                "llm_sidecar_engine_scrapes_total{result=\"error\"} 3.0",
                "llm_sidecar_engine_scrapes_total{result=\"ok\"} 12.0",
                "process_uptime_seconds 19.486");
        assertThat(g.getDouble("minorCount")).isEqualTo(4.0);
        assertThat(g.getDouble("majorCount")).isEqualTo(1.0);
        assertThat(g.getDouble("allocatedBytes")).isEqualTo(2.2413312E7);
        assertThat(g.getDouble("edenUsedBytes")).isEqualTo(8027640.0);
        assertThat(g.getDouble("heapMaxBytes")).isEqualTo(1.1206656E7 + 1376256.0 + 2.7983872E7);
        assertThat(g.getDouble("engineScrapesOk")).isEqualTo(12.0);
        assertThat(g.getDouble("uptimeSeconds")).isEqualTo(19.486);
    }

    @Test
    void allocationIsTheCounterPlusTheEdensGrowthAndSafepointsAreThoseBetweenTheUptimes() throws Exception {
        Path log = dir.resolve("sp.log");
        Files.writeString(log, """
                [9.000s][safepoint        ] Safepoint "Cleanup", Time since last: 1 ns, Reaching safepoint: 1 ns, Cleanup: 1 ns, At safepoint: 1 ns, Total: 5000000 ns
                [10.265s][safepoint,stats  ] GenCollectForAllocation      [ 11 0 ][ 3015 164505 8677199 8844719 ] 0
                [10.265s][safepoint        ] Safepoint "GenCollectForAllocation", Time since last: 245066348 ns, Reaching safepoint: 3015 ns, Cleanup: 164505 ns, At safepoint: 8677199 ns, Total: 8844719 ns
                [12.372s][safepoint        ] Safepoint "GenCollectForAllocation", Time since last: 97888986 ns, Reaching safepoint: 2814 ns, Cleanup: 122193 ns, At safepoint: 8505352 ns, Total: 30000000 ns
                [14.000s][safepoint        ] Safepoint "ICBufferFull", Time since""");
        JvmProbe.SafepointLog sp = new JvmProbe.SafepointLog(log);
        JsonObject before = counters("jvm_gc_memory_allocated_bytes_total 1.0E7",
                "jvm_memory_used_bytes{area=\"heap\",id=\"Eden Space\"} 6000000", "process_uptime_seconds 10.0");
        JsonObject after = counters("jvm_gc_memory_allocated_bytes_total 3.0E7",
                "jvm_memory_used_bytes{area=\"heap\",id=\"Eden Space\"} 1000000", "process_uptime_seconds 15.0");
        JsonObject d = JvmProbe.delta(before, after, sp);
        // 20 MB counted at collections, the eden 5 MB emptier than at the first reading
        assertThat(d.getDouble("allocatedBytes")).isEqualTo(15e6);
        assertThat(d.getDouble("seconds")).isEqualTo(5.0);
        JsonObject s = d.getJsonObject("safepoints");
        assertThat(s.getLong("count")).isEqualTo(2);
        assertThat(s.getDouble("totalMillis")).isCloseTo(38.844719, within(1e-9));
        assertThat(s.getDouble("maxMillis")).isEqualTo(30.0);
        assertThat(s.getDouble("pausedPercent")).isCloseTo(100 * 0.038844719 / 5, within(1e-9));
        assertThat(s.getJsonObject("byOperation").getJsonObject("GenCollectForAllocation").getLong("count")).isEqualTo(2);
        // the line being written is read once it is complete, by the next phase
        Files.writeString(log, " ns, Reaching safepoint: 1 ns, Cleanup: 1 ns, At safepoint: 1 ns, Total: 2000000 ns\n",
                StandardOpenOption.APPEND);
        assertThat(sp.between(13, 20).getLong("count")).isEqualTo(1);
        assertThat(sp.between(0, 100).getLong("count")).isZero();
    }

    @Test
    void quarkusGivesOneEventLoopPerCoreWithinOnePerTenMegabytesOfHeapAndAtLeastTwo() {
        double mb = 1024 * 1024;
        assertThat(JvmProbe.quarkusDefaultEventLoops(38.6 * mb, 2)).isEqualTo(2);
        assertThat(JvmProbe.quarkusDefaultEventLoops(38.6 * mb, 64)).isEqualTo(3);
        assertThat(JvmProbe.quarkusDefaultEventLoops(12 * mb, 8)).isEqualTo(2);
        assertThat(JvmProbe.quarkusDefaultEventLoops(1024 * mb, 8)).isEqualTo(8);
    }

    @Test
    void countsTheEventLoopThreadsOfAProcess() {
        // this JVM has none (the client's Vert.x is not started here): a readable /proc, zero threads
        assertThat(JvmProbe.eventLoopThreads(ProcessHandle.current().pid())).isZero();
        assertThat(JvmProbe.eventLoopThreads(-5)).isEqualTo(-1);
    }
}
