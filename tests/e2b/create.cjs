// Create a sandbox with a small npm project in /home/user/repo (written
// with the files API, which no policy judges); prints its id.
const { Sandbox, main } = require('./sdk.cjs')

main(async () => {
  const sbx = await Sandbox.create({ timeoutMs: 600_000 })
  await sbx.files.write('repo/package.json', JSON.stringify({
    name: 'seed', version: '1.0.0', scripts: { test: 'echo tests pass' },
  }))
  console.log(sbx.sandboxId)
}, true)
