// xunit-viewer ships its parser (the one its CLI and page use) without type declarations.
declare module 'xunit-viewer/src/cli/parse.js' {
  interface XunitViewerTest {
    name: string;
    status: 'passed' | 'failure' | 'error' | 'skipped' | 'unknown';
    time?: string;
    messages?: string[];
    systemOut?: string[];
    properties?: Record<string, string[]>;
  }
  interface XunitViewerSuite {
    name: string;
    tests: Record<string, XunitViewerTest>;
    properties: Record<string, unknown>;
  }
  const parse: (xml: string) => Promise<{ suites: Record<string, XunitViewerSuite> }>;
  export default parse;
}
