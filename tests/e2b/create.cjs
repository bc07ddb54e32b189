// Create a sandbox with a small npm project in /home/user/repo (written
// with the files API); prints its id. ARGV[2], if given, is JSON of more
// options for Sandbox.create.
const { Sandbox, main } = require('./sdk.cjs')

main(async () => {
  const more = process.argv[2] ? JSON.parse(process.argv[2]) : {}
  const sbx = await Sandbox.create({ timeoutMs: 600_000, ...more })
  await sbx.files.write('repo/package.json', JSON.stringify({
    name: 'seed', version: '1.0.0', scripts: { test: 'echo tests pass' },
  }))
  console.log(sbx.sandboxId)
}, true)
