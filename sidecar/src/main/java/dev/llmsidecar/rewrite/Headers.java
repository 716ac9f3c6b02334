package dev.llmsidecar.rewrite;

/** The headers of one message as a rewrite may read and edit them (names are case-insensitive). */
public interface Headers {

    /** The first value of {@code name}, or null. */
    String get(String name);

    /** Sets {@code name} to {@code value}, replacing every value it had. */
    void set(String name, String value);

    void remove(String name);
}
