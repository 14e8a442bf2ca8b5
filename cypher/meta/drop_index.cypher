// Used only by an explicit dimension migration. Index names come from a fixed list in graphmem/store/schema.py.
// tenant-free: schema statement
DROP INDEX $name IF EXISTS
