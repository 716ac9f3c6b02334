package dev.llmsidecar.metrics;

/** Where a series goes. */
public enum Backend { PROMETHEUS, OTLP }
