export declare function membersOf(group: string): string[];
export declare function groupFiles(): string[];
export declare function testFilePatterns(args: string[]): string[];
