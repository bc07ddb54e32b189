// A client that goes away mid-stream: prints the pid after two lines of a
// longer command, then exits without a word to the server.
const { Sandbox, main } = require('./sdk.cjs')

main(async () => {
  const sbx = await Sandbox.connect(process.argv[2])
  let lines = 0
  const h = await sbx.commands.run(
    'for i in $(seq 1 80); do echo $i; sleep 0.1; done; echo done',
    { background: true, timeoutMs: 0, onStdout: (d) => {
      lines += d.split('\n').length - 1
      if (lines >= 2) { console.log(h.pid); process.exit(0) }
    } })
  await new Promise((res) => setTimeout(res, 10_000))
  throw new Error('no output')
}, true)
