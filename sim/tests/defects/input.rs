//! Issue 11 regressions: bad input (launch limits, argument and initialiser ranges, output
//! paths, error wording) is exit 2 with the key path before anything is simulated.

// ---- PTX that ptxas rejects (item 15) and nesting the host stack cannot hold (item 9) ----
mod ptx_front_end {
    use std::process::{Command, Output};

    /// `gpusim ptx` on a file holding `src`.
    fn gpusim_ptx(tag: &str, src: &str) -> (Output, String) {
        let dir = crate::common::temp_dir(tag);
        let path = dir.join("k.ptx");
        std::fs::write(&path, src).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_gpusim"))
            .args(["ptx", path.to_str().unwrap()])
            .output()
            .unwrap();
        let path = path.to_str().unwrap().to_string();
        (out, path)
    }

    fn kernel(head: &str, body: &str) -> String {
        format!(
            "{head}.visible .entry k()\n{{\n  .reg .b32 %r<3>;\n  .reg .b64 %rd<3>;\n{body}  ret;\n}}\n"
        )
    }

    const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

    #[test]
    fn ptx_that_ptxas_rejects_is_exit_2_at_its_line_and_column() {
        let cases = [
            (
                kernel(HEAD, "  .reg .b32 %r1;\n"),
                "8:13: `%r1` is declared twice in one scope",
            ),
            (
                kernel(HEAD, "  add.u64 %r0, %r1, %r2;\n"),
                "8:11: `%r0` is a .b32 register, but this operand is .u64",
            ),
            (
                kernel(HEAD, "  add.u7 %r0, %r1, %r2;\n"),
                "8:6: unknown type `.u7` for `add`",
            ),
            (
                kernel(".version 8.0\n.target sm_91\n.address_size 64\n", ""),
                "2:9: unknown `.target` `sm_91`",
            ),
            (
                kernel(".version 8.9\n.target sm_90\n.address_size 64\n", ""),
                "1:10: unknown PTX ISA version 8.9",
            ),
            (
                kernel(".version 7.7\n.target sm_90\n.address_size 64\n", ""),
                "2:9: PTX ISA 7.7 does not know `.target sm_90`",
            ),
            (
                kernel(".target sm_90\n.address_size 64\n", ""),
                "1:1: a PTX module starts with a `.version` directive",
            ),
        ];
        for (i, (src, want)) in cases.iter().enumerate() {
            let (out, path) = gpusim_ptx(&format!("ptxas-rejects-{i}"), src);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert!(
                stderr.contains(&format!("{path}:{want}")),
                "{want}:\n{stderr}"
            );
        }
    }

    #[test]
    fn ptx_nested_100000_deep_is_exit_2_not_a_stack_overflow() {
        const N: usize = 100_000;
        let cases = [
            format!(
                "{HEAD}.global .u32 g = {}1{};\n",
                "(".repeat(N),
                ")".repeat(N)
            ),
            format!(
                "{HEAD}.global .u32 g[1] = {}1{};\n",
                "{".repeat(N),
                "}".repeat(N)
            ),
            kernel(HEAD, &format!("  add.u32 %r0, %r1, {}1;\n", "-".repeat(N))),
            kernel(
                HEAD,
                &format!("  mov.b32 %r0, {}%r1{};\n", "{".repeat(N), "}".repeat(N)),
            ),
            kernel(HEAD, &format!("{}{}", "{\n".repeat(N), "}\n".repeat(N))),
        ];
        for (i, src) in cases.iter().enumerate() {
            let (out, path) = gpusim_ptx(&format!("deep-{i}"), src);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{stderr}");
            assert!(stderr.contains(&format!("{path}:")), "{stderr}");
            assert!(
                stderr.contains("nested deeper than 256")
                    || stderr.contains("nesting deeper than 256"),
                "{stderr}"
            );
        }
    }
}
