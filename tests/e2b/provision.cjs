// The seed's provisioning flow: create (timeout, metadata, envs), clone a
// repository, install, leave a process running; prints "ID PID".
const { Sandbox, main } = require('./sdk.cjs')

main(async () => {
  const url = process.argv[2]
  const sbx = await Sandbox.create({
    timeoutMs: 600_000,
    metadata: { seed: 'provision', owner: 'tests' },
    envs: { GREETING: 'hello from envs' },
  })
  await sbx.commands.run(`git clone -q ${url} repo`, { timeoutMs: 60_000 })
  const inst = await sbx.commands.run(
    'cd repo && npm install --offline --no-audit --no-fund >/dev/null && echo "installed: $GREETING"')
  if (inst.stdout !== 'installed: hello from envs\n')
    throw new Error(`install step printed ${JSON.stringify(inst.stdout)}`)
  const bg = await sbx.commands.run(
    'n=0; while :; do n=$((n+1)); echo $n >/home/user/count; sleep 0.1; done',
    { background: true, timeoutMs: 0 })
  console.log(`${sbx.sandboxId} ${bg.pid}`)
}, true)
