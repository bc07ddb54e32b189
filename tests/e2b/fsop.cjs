// One call of the files API on sandbox ID: write PATH TEXT, makeDir PATH,
// rename FROM TO, remove PATH. Prints "ok", or "error NAME: MESSAGE".
const { Sandbox, main } = require('./sdk.cjs')

main(async () => {
  const [id, op, ...args] = process.argv.slice(2)
  const sbx = await Sandbox.connect(id)
  await sbx.files[op](...args)
  console.log('ok')
}, true)
