package dev.llmsidecar.support;

import dev.llmsidecar.observe.RequestHead;
import java.util.Locale;
import java.util.Map;

/** The head of a POST to /v1/chat/completions with the given headers (names in lower case), for driving the seam. */
public record ChatHead(Map<String, String> headers) implements RequestHead {
    @Override
    public String method() {
        return "POST";
    }

    @Override
    public String path() {
        return "/v1/chat/completions";
    }

    @Override
    public String header(String name) {
        return headers.get(name.toLowerCase(Locale.ROOT));
    }

    @Override
    public Iterable<String> headerNames() {
        return headers.keySet();
    }
}
