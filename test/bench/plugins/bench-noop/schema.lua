return {
  name = "bench-noop",
  fields = {
    { config = { type = "record", fields = {} } },
  },
}
