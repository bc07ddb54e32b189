// commands.run CMD in sandbox ID with cwd /home/user/repo: prints its
// stdout, or "error NAME: MESSAGE".
const { Sandbox, main } = require('./sdk.cjs')

main(async () => {
  const sbx = await Sandbox.connect(process.argv[2])
  const r = await sbx.commands.run(process.argv[3], { cwd: '/home/user/repo' })
  process.stdout.write(r.stdout)
}, true)
