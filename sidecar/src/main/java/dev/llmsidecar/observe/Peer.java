package dev.llmsidecar.observe;

/** Which side of the proxy a connection belongs to. */
public enum Peer {
    CLIENT("client"), UPSTREAM("upstream");

    public final String label;

    Peer(String label) {
        this.label = label;
    }
}
