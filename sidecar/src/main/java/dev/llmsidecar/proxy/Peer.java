package dev.llmsidecar.proxy;

import dev.llmsidecar.observe.ProxyEvent;

/** Which side of the proxy a connection belongs to. */
enum Peer {
    CLIENT("client", ProxyEvent.CONNECTION_ERROR_CLIENT),
    UPSTREAM("upstream", ProxyEvent.CONNECTION_ERROR_UPSTREAM);

    final String label;
    /** What a failure of such a connection outside an exchange's own handling counts as. */
    final ProxyEvent connectionError;

    Peer(String label, ProxyEvent connectionError) {
        this.label = label;
        this.connectionError = connectionError;
    }
}
