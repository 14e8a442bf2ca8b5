// Used only by migrations (vector dimension; full-text definition). Index names come from fixed lists in
// graphmem/store/schema.py.
// tenant-free: schema statement
DROP INDEX $name IF EXISTS
