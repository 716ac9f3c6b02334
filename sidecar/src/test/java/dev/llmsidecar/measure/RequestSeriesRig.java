package dev.llmsidecar.measure;

/** Requests for tests of the series themselves. */
public final class RequestSeriesRig {

    private RequestSeriesRig() {
    }

    /** A chat request's labels as an OpenAI-format request gets them (provider openai), SLO class default. */
    public static RequestLabels labels(String model, String tenant, String priority) {
        return labels(model, tenant, priority, "chat", "openai_chat");
    }

    public static RequestLabels labels(String model, String tenant, String priority, String operation,
            String format) {
        return new RequestLabels(model, operation, "openai", format, tenant, priority, "default");
    }

    /** A request shed before its body was read, as the model {@code model}. */
    public static RequestLabels shed(String model, String operation, String format) {
        return RequestLabels.shed(model, operation, "openai", format);
    }
}
