// tenant-free: readiness check
RETURN 1 AS ok
