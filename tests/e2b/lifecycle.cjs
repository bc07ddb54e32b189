// pause, resume with memory and processes intact, an expired timeout
// pauses, kill removes, unknown and killed ids are not found. argv: the
// sandbox's id and its home directory on the host.
const fs = require('node:fs')
const { Sandbox, NotFoundError, SandboxNotFoundError, main } = require('./sdk.cjs')

function check(what, cond, got) {
  if (!cond) throw new Error(`${what}: got ${JSON.stringify(got)}`)
  console.log(`ok ${what}`)
}
const sleep = (ms) => new Promise((res) => setTimeout(res, ms))
const count = (home) => {
  try { return Number(fs.readFileSync(`${home}/ticks`, 'utf8')) } catch { return 0 }
}

main(async () => {
  const [id, home] = [process.argv[2], process.argv[3]]
  let sbx = await Sandbox.connect(id)
  const h = await sbx.commands.run(
    'n=0; while :; do n=$((n+1)); echo $n >/home/user/ticks.tmp; ' +
    'mv /home/user/ticks.tmp /home/user/ticks; sleep 0.1; done',
    { background: true, timeoutMs: 0 })
  for (let i = 0; i < 100 && !(count(home) >= 5); i++)
    await sleep(100)
  check('pause', await sbx.pause() === true, null)
  const c1 = count(home)
  await sleep(600)
  check('nothing runs while paused', count(home) === c1 && c1 >= 5, [c1, count(home)])
  const listed = await Sandbox.list().nextItems()
  check('list shows it paused', listed.some((s) => s.sandboxId === id && s.state === 'paused'), listed)
  check('pause of a paused one', await Sandbox.pause(id) === false, null)
  let refused = ''
  try { await sbx.commands.run('true') } catch (e) { refused = e.name }
  check('a paused sandbox runs nothing', refused !== '', refused)

  sbx = await Sandbox.connect(id)
  for (let i = 0; i < 50 && count(home) === c1; i++)
    await sleep(100)
  const c2 = count(home)
  check('resume keeps memory (the count goes on)', c2 > c1 && c2 < c1 + 40, [c1, c2])
  const procs = await sbx.commands.list()
  check('resume keeps processes', procs.some((p) => p.pid === h.pid), procs)
  check('list shows it running', (await Sandbox.list().nextItems()).some(
    (s) => s.sandboxId === id && s.state === 'running'), null)

  await sbx.setTimeout(1000)
  await sleep(1500)
  let info = await Sandbox.getInfo(id)
  for (let i = 0; i < 100 && info.state !== 'paused'; i++) {
    await sleep(100)
    info = await Sandbox.getInfo(id)
  }
  check('an expired timeout pauses', info.state === 'paused', info.state)
  sbx = await Sandbox.connect(id, { timeoutMs: 60_000 })
  check('connect resumes it', (await sbx.getInfo()).state === 'running', null)
  check('and its process', (await sbx.commands.list()).some((p) => p.pid === h.pid), null)

  await sbx.kill()
  for (const gone of [id, 'sbx-000000000000', 'no-such-sandbox']) {
    try {
      await Sandbox.connect(gone)
      throw new Error(`connect to ${gone} worked`)
    } catch (e) {
      check(`connect to ${gone === id ? 'a killed' : 'an unknown'} id: not found`,
        e instanceof SandboxNotFoundError || e instanceof NotFoundError, [e.name, e.message])
    }
  }
  check('kill of a killed one', await Sandbox.kill(id) === false, null)
})
