package dev.llmsidecar.export.contract;

/** Where a series goes. */
public enum Backend { PROMETHEUS, OTLP }
