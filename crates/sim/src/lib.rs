//! Trace replay, miss-ratio curves and (later) the discrete-event simulator.
