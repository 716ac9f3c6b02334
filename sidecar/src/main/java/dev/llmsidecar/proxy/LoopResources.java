package dev.llmsidecar.proxy;

/**
 * What one event loop keeps for the exchanges on it: its upstream connections and its idle-timeout check. The client
 * connections of that loop use only these, so a read is handled on one thread from socket to socket.
 */
record LoopResources(UpstreamPool pool, LoopTimeouts timeouts) {
}
