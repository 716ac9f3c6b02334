package dev.llmsidecar.observe;

/**
 * A request body the data path holds whole, as far as an observer may read it ({@link ExchangeObserver#requestBody}):
 * valid only during that call, so an observer that keeps anything copies it. The data path passes an object it has
 * anyway, so an observer that reads nothing costs nothing.
 */
public interface RequestBytes {

    /** The body's length in bytes. */
    int length();

    /** Copies the first {@code length} bytes of the body (at most {@link #length()}) into {@code dst} from 0. */
    void copyTo(byte[] dst, int length);
}
