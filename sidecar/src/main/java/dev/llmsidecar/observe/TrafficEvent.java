package dev.llmsidecar.observe;

/**
 * Something counted through {@link TrafficObserver#count}: a constant of an enum that the proxy ({@link ProxyEvent})
 * or a feature owns (include_usage's in its own package). An event names no series: the metrics side binds every
 * constant of each enum to its series once, in a switch without a default branch (the proxy's in measure/, a feature's
 * where the app registers it), so a constant without its series does not compile. Implemented by enums only.
 */
public interface TrafficEvent {
}
