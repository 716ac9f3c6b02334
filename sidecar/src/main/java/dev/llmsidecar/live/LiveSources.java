package dev.llmsidecar.live;

import dev.llmsidecar.measure.InFlight;
import dev.llmsidecar.measure.LiveWindows;
import dev.llmsidecar.measure.SaturationMetrics;
import dev.llmsidecar.slo.GoodputWindows;
import io.vertx.core.json.JsonObject;

/** What the views of /q/llm read: the measurements they render, nothing they would change. */
public interface LiveSources {

    InFlight inFlight();

    GoodputWindows goodput();

    LiveWindows windows();

    SaturationMetrics saturation();

    /** Conversations and agent loops, or null while sidecar.conversations.enabled is off. */
    default dev.llmsidecar.conversation.Conversations conversations() {
        return null;
    }

    /** The engine member of /q/llm, or null while no scraper runs. */
    JsonObject engineView();
}
