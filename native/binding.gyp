{
  "targets": [
    {
      "target_name": "dpkit_native",
      "sources": ["src/addon.cc", "src/affinity.cc", "src/common.cc", "src/eventfd.cc", "src/memory.cc", "src/packet.cc", "src/unix.cc", "src/watch.cc", "src/tap.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS"],
      "cflags_cc": ["-std=c++17", "-O2", "-Wall", "-Wextra"]
    }
  ]
}
