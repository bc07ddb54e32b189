// A second process: connect to the first one's sandbox by id and drive it.
const { Sandbox, CommandExitError, TimeoutError, main } = require('./sdk.cjs')

function check(what, cond, got) {
  if (!cond) throw new Error(`${what}: got ${JSON.stringify(got)}`)
  console.log(`ok ${what}`)
}

main(async () => {
  const [id, pid] = [process.argv[2], Number(process.argv[3])]
  const sbx = await Sandbox.connect(id)
  const readme = await sbx.files.read('repo/README')
  check('sees the clone', readme === 'a repository for the seed\n', readme)
  const procs = await sbx.commands.list()
  const left = procs.find((p) => p.pid === pid)
  check('sees the process left running', left && left.cmd === '/bin/bash' &&
    left.args.join(' ').includes('/home/user/count'), procs)

  await sbx.setTimeout(120_000)
  const info = await sbx.getInfo()
  const left_ms = info.endAt.getTime() - Date.now()
  check('setTimeout extends', left_ms > 100_000 && left_ms <= 121_000, left_ms)
  check('metadata kept', info.metadata.seed === 'provision', info.metadata)

  const times = []
  let err = ''
  const r = await sbx.commands.run(
    'for i in 1 2 3; do echo line $i; sleep 1; done; echo oops >&2',
    { onStdout: (d) => times.push([Date.now(), d]), onStderr: (d) => { err += d } })
  const spread = times.length ? times[times.length - 1][0] - times[0][0] : 0
  check('stdout streamed line by line', times.length === 3 && spread >= 1500 &&
    times[0][1] === 'line 1\n', times)
  check('stderr streamed', err === 'oops\n' && r.stderr === 'oops\n', err)
  check('exit code 0', r.exitCode === 0, r)

  // A flood, in chunks that split multi-byte characters, on both streams.
  const line = 'h\u00e9llo w\u00f6rld \u2713\n'
  const flood = await sbx.commands.run(
    `yes '${line.trim()}' | head -n 1000000; yes e | head -n 100000 >&2`)
  check('a 17 MB flood arrives whole', flood.stdout === line.repeat(1000000) &&
    flood.stderr === 'e\n'.repeat(100000), flood.stdout.length)

  try {
    await sbx.commands.run('echo partial; exit 7')
    throw new Error('exit 7 did not throw')
  } catch (e) {
    check('exit code 7', e instanceof CommandExitError && e.exitCode === 7 &&
      e.stdout === 'partial\n', [e.name, e.exitCode, e.stdout])
  }

  const t0 = Date.now()
  try {
    await sbx.commands.run('sleep 30', { timeoutMs: 1000 })
    throw new Error('timeoutMs did not stop the command')
  } catch (e) {
    check('timeoutMs', e instanceof TimeoutError && Date.now() - t0 < 5000,
      [e.name, e.message, Date.now() - t0])
  }

  let got = ''
  const cat = await sbx.commands.run('cat', {
    background: true, stdin: true, timeoutMs: 0, onStdout: (d) => { got += d },
  })
  await sbx.commands.sendStdin(cat.pid, 'ping\n')
  for (let i = 0; i < 50 && !got.includes('ping'); i++)
    await new Promise((res) => setTimeout(res, 100))
  check('sendStdin reaches a background command', got === 'ping\n', got)
  check('kill', await cat.kill(), false)
  try {
    await cat.wait()
    throw new Error('a killed command exited 0')
  } catch (e) {
    check('killed command ends', e instanceof CommandExitError &&
      e.exitCode !== 0, [e.name, e.exitCode])
  }
  check('kill the first process\'s command', await sbx.commands.kill(pid), pid)
  let after = await sbx.commands.list()
  for (let i = 0; i < 50 && after.some((p) => p.pid === pid || p.pid === cat.pid); i++) {
    await new Promise((res) => setTimeout(res, 100))
    after = await sbx.commands.list()
  }
  check('it is gone', !after.some((p) => p.pid === pid || p.pid === cat.pid), after)
  check('kill of an unknown pid', !(await sbx.commands.kill(999999)), false)
})
