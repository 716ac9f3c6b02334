package dev.llmsidecar.app;

import dev.llmsidecar.metrics.Contract;
import dev.llmsidecar.metrics.Label;
import dev.llmsidecar.metrics.LabelValues;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.proxy.MemoryMark;
import dev.llmsidecar.proxy.ProxyServer;

/**
 * The proxy's memory against its budgets, as gauges (read at collection time): the heap and direct memory against the
 * marks past which new requests are shed, and the request bodies held for inspection against their budget.
 */
public final class ProxyGauges {

    private ProxyGauges() {
    }

    public static void register(Recorders recorders, ProxyServer server) {
        register(recorders, server.memory(), server::inspectBudgetUsed, server::inspectBudgetLimit);
    }

    /** @param bodies bytes of request bodies held for inspection now; {@code budget}, their budget */
    public static void register(Recorders recorders, MemoryMark memory, java.util.function.LongSupplier bodies,
            java.util.function.LongSupplier budget) {
        recorders.observe(Contract.MEMORY_USED, () -> memory.last().heapUsed(), budget("heap"));
        recorders.observe(Contract.MEMORY_BUDGET, () -> memory.last().heapMark(), budget("heap"));
        recorders.observe(Contract.MEMORY_USED, () -> memory.last().directUsed(), budget("direct"));
        recorders.observe(Contract.MEMORY_BUDGET, () -> memory.last().directMark(), budget("direct"));
        recorders.observe(Contract.MEMORY_USED, bodies::getAsLong, budget("request_bodies"));
        recorders.observe(Contract.MEMORY_BUDGET, budget::getAsLong, budget("request_bodies"));
    }

    private static LabelValues budget(String name) {
        return LabelValues.of(Label.BUDGET, name);
    }
}
