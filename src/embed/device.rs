//! Where models run: Metal on macOS, CUDA when built with the `cuda` feature and a GPU is
//! there, the CPU otherwise. `BRAIN_DEVICE=cpu` forces the CPU.

use candle_core::Device;

/// The device a model loaded now would run on.
pub fn select() -> Device {
    if forced_cpu() {
        return Device::Cpu;
    }
    #[cfg(feature = "cuda")]
    if let Ok(d) = Device::new_cuda(0) {
        return d;
    }
    #[cfg(target_os = "macos")]
    if let Ok(d) = Device::new_metal(0) {
        return d;
    }
    Device::Cpu
}

/// A short name for a device: `cpu`, `cuda:0`, `metal`.
pub fn label(device: &Device) -> String {
    match device {
        Device::Cpu => "cpu".into(),
        Device::Cuda(_) => "cuda:0".into(),
        Device::Metal(_) => "metal".into(),
    }
}

/// Where a model would run, and why not on a GPU when this build could use one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// `cpu`, `cuda:0` or `metal`.
    pub label: String,
    /// Why the CPU although this build supports a GPU (`BRAIN_DEVICE=cpu`, no device found).
    pub note: Option<String>,
}

/// The device a model would run on, without creating it (cheap; for listings).
pub fn expected() -> Expected {
    let cpu = |note: Option<String>| Expected {
        label: "cpu".into(),
        note,
    };
    let gpu_build = cfg!(feature = "cuda") || cfg!(target_os = "macos");
    if forced_cpu() {
        return cpu(gpu_build.then(|| "BRAIN_DEVICE=cpu".to_string()));
    }
    if cfg!(feature = "cuda") {
        if cuda_present() {
            return Expected {
                label: "cuda:0".into(),
                note: None,
            };
        }
        return cpu(Some(
            "built with CUDA, but no CUDA device is available (driver missing or no GPU)".into(),
        ));
    }
    if cfg!(target_os = "macos") {
        if metal_present() {
            return Expected {
                label: "metal".into(),
                note: None,
            };
        }
        return cpu(Some(
            "built with Metal, but no Metal device is available".into(),
        ));
    }
    cpu(None)
}

// candle's `cuda_is_available` and `metal_is_available` only say whether the feature was
// compiled in; whether a device is there is known only by opening one. Done once per
// process: it costs milliseconds, and listings ask for every model.

#[cfg(feature = "cuda")]
fn cuda_present() -> bool {
    static PRESENT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PRESENT.get_or_init(|| Device::new_cuda(0).is_ok())
}

#[cfg(not(feature = "cuda"))]
fn cuda_present() -> bool {
    false
}

#[cfg(target_os = "macos")]
fn metal_present() -> bool {
    static PRESENT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PRESENT.get_or_init(|| Device::new_metal(0).is_ok())
}

#[cfg(not(target_os = "macos"))]
fn metal_present() -> bool {
    false
}

fn forced_cpu() -> bool {
    std::env::var("BRAIN_DEVICE").is_ok_and(|v| v.eq_ignore_ascii_case("cpu"))
}
