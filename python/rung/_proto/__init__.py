"""rung's gRPC stubs, generated from proto/rung.proto at build time (python/CMakeLists.txt)."""
