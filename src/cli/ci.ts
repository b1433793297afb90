/** Whether a CI system runs corral (`CI` set to anything but empty, `false` or `0`): nobody is there to answer. */
export function isCi(env: NodeJS.ProcessEnv): boolean {
  return env.CI !== undefined && env.CI !== '' && env.CI !== 'false' && env.CI !== '0';
}
