"""
Test Results Parser

This script parses test execution outputs to extract structured test results.

Input:
    - stdout_file: Path to the file containing standard output from test execution
    - stderr_file: Path to the file containing standard error from test execution

Output:
    - JSON file containing parsed test results with structure:
      {
          "tests": [
              {
                  "name": "test_name",
                  "status": "PASSED|FAILED|SKIPPED|ERROR"
              },
              ...
          ]
      }
"""

import dataclasses
import json
import sys
import re
from enum import Enum
from pathlib import Path
from typing import List


class TestStatus(Enum):
    """The test status enum."""

    PASSED = 1
    FAILED = 2
    SKIPPED = 3
    ERROR = 4


@dataclasses.dataclass
class TestResult:
    """The test result dataclass."""

    name: str
    status: TestStatus



def parse_test_output(stdout_content: str, stderr_content: str) -> List[TestResult]:
    """
    Parse the test output content and extract test results.

    Args:
        stdout_content: Content of the stdout file
        stderr_content: Content of the stderr file

    Returns:
        List of TestResult objects
    """
    results = []
    
    combined_content = stdout_content + "\n" + stderr_content
    
    pytest_pattern = r'\[gw\d+\]\s+\[\s*\d+%\]\s+(PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)\s+(test/.*?\.py::.*?)(?:\s|$)'
    
    for match in re.finditer(pytest_pattern, combined_content):
        status_str = match.group(1)
        test_name = match.group(2)
        
        if status_str == 'PASSED' or status_str == 'XPASS':
            status = TestStatus.PASSED
        elif status_str == 'FAILED':
            status = TestStatus.FAILED
        elif status_str == 'SKIPPED' or status_str == 'XFAIL':
            status = TestStatus.SKIPPED
        else:
            status = TestStatus.ERROR
        
        results.append(TestResult(name=test_name, status=status))
    
    if not results:
        alt_pytest_pattern = r'(PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)\s+(test/.*?\.py::.*?)(?:\s|$)'
        
        for match in re.finditer(alt_pytest_pattern, combined_content):
            status_str = match.group(1)
            test_name = match.group(2)
            
            if status_str == 'PASSED' or status_str == 'XPASS':
                status = TestStatus.PASSED
            elif status_str == 'FAILED':
                status = TestStatus.FAILED
            elif status_str == 'SKIPPED' or status_str == 'XFAIL':
                status = TestStatus.SKIPPED
            else:
                status = TestStatus.ERROR
            
            results.append(TestResult(name=test_name, status=status))
    
    if not results:
        ansible_test_pattern = r'(ok|failed|skipped|error)\s+\[(.*?)\]'
        
        for match in re.finditer(ansible_test_pattern, combined_content):
            status_str = match.group(1)
            test_name = match.group(2)
            
            if status_str == 'ok':
                status = TestStatus.PASSED
            elif status_str == 'failed':
                status = TestStatus.FAILED
            elif status_str == 'skipped':
                status = TestStatus.SKIPPED
            else:
                status = TestStatus.ERROR
            
            results.append(TestResult(name=test_name, status=status))
    
    if not results:
        test_lines = re.findall(r'test[^\n]*', combined_content)
        for line in test_lines:
            if 'PASSED' in line or 'passed' in line.lower():
                parts = line.strip().split()
                for i, part in enumerate(parts):
                    if 'test/' in part and '.py' in part:
                        test_name = part
                        results.append(TestResult(name=test_name, status=TestStatus.PASSED))
                        break
            elif 'FAILED' in line or 'failed' in line.lower():
                parts = line.strip().split()
                for i, part in enumerate(parts):
                    if 'test/' in part and '.py' in part:
                        test_name = part
                        results.append(TestResult(name=test_name, status=TestStatus.FAILED))
                        break
    
    return results




def export_to_json(results: List[TestResult], output_path: Path) -> None:
    """
    Export the test results to a JSON file.

    Args:
        results: List of TestResult objects
        output_path: Path to the output JSON file
    """

    unique_results = {result.name: result for result in results}.values()

    json_results = {
        'tests': [
            {'name': result.name, 'status': result.status.name} for result in unique_results
        ]
    }

    with open(output_path, 'w') as f:
        json.dump(json_results, f, indent=2)


def main(stdout_path: Path, stderr_path: Path, output_path: Path) -> None:
    """
    Main function to orchestrate the parsing process.

    Args:
        stdout_path: Path to the stdout file
        stderr_path: Path to the stderr file
        output_path: Path to the output JSON file
    """
    with open(stdout_path) as f:
        stdout_content = f.read()
    with open(stderr_path) as f:
        stderr_content = f.read()

    results = parse_test_output(stdout_content, stderr_content)

    export_to_json(results, output_path)


if __name__ == '__main__':
    if len(sys.argv) != 4:
        print('Usage: python parsing.py <stdout_file> <stderr_file> <output_json>')
        sys.exit(1)

    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
