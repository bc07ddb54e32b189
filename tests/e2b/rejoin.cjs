// Re-join a command by pid (commands.connect) and wait for its end.
const { Sandbox, main } = require('./sdk.cjs')

main(async () => {
  const sbx = await Sandbox.connect(process.argv[2])
  const pid = Number(process.argv[3])
  const running = (await sbx.commands.list()).some((p) => p.pid === pid)
  console.log(`running ${running}`)
  const h = await sbx.commands.connect(pid)
  const r = await h.wait()
  console.log(`exit ${r.exitCode} last ${r.stdout.trim().split('\n').pop()}`)
}, true)
