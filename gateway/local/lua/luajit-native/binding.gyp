{
  "targets": [
    {
      "target_name": "luajit_vm",
      "sources": ["src/luajit_vm.c"],
      "defines": ["NAPI_VERSION=8"],
      "cflags": ["<!@(pkg-config --cflags luajit)", "-Wall", "-Wextra", "-O2"],
      "libraries": ["<!@(pkg-config --libs luajit)"]
    }
  ]
}
