package dev.llmsidecar.slo;

/** What an objective checks; label values of the violation counter. */
public enum Criterion {
    TTFT("ttft"), TPOT("tpot"), E2E("e2e"), ITL("itl"),
    /** The request did not complete successfully (upstream error, broken stream, client cancel). */
    ERROR("error");

    private final String label;

    Criterion(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
