{
  "targets": [
    {
      "target_name": "dpkit_native",
      "sources": ["src/addon.cc", "src/affinity.cc", "src/clock.cc", "src/common.cc", "src/eventfd.cc", "src/memory.cc", "src/packet.cc", "src/unix.cc", "src/watch.cc", "src/xdp.cc", "src/tap.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_DISABLE_CPP_EXCEPTIONS"],
      "cflags_cc": ["-std=c++17", "-O2", "-Wall", "-Wextra"],
      "conditions": [
        # net_af_xdp's part of the shim, only where libxdp and libbpf are installed (libxdp-dev, libbpf-dev).
        ["'<!(pkg-config --exists libxdp libbpf && echo yes || echo no)'=='yes'", {
          "defines": ["DPKIT_HAVE_LIBXDP"],
          "cflags_cc": ["<!@(pkg-config --cflags libxdp libbpf)"],
          "libraries": ["<!@(pkg-config --libs libxdp libbpf)"]
        }]
      ]
    }
  ]
}
