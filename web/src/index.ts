/** The main page: the tool for everyone, and history, keys and webhooks once signed in. */
import { refreshAllowance, setUpHistory, setUpKeys, setUpWebhooks } from './account'
import { onSession } from './session'
import { setUpRateWaitNotice } from './rate-wait'
import { setUpSignIn } from './sign-in'
import { setUpTool } from './tool'
import { toggleSignedIn } from './dom'

const history = setUpHistory()
const keys = setUpKeys()
const webhooks = setUpWebhooks()
let signedIn = false

setUpRateWaitNotice()
setUpSignIn()
setUpTool(() => {
  void refreshAllowance(signedIn)
  if (signedIn) void history.load()
})

onSession((session) => {
  const was = signedIn
  signedIn = Boolean(session)
  toggleSignedIn(signedIn)
  // A refresh changes the session but not who is signed in: reload only on sign-in or sign-out.
  if (was === signedIn && session) return
  void refreshAllowance(signedIn)
  if (signedIn) void Promise.all([history.load(), keys.load(), webhooks.load()])
})
