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

/// The device a model would run on, without creating it (cheap; for listings).
pub fn expected_label() -> String {
    if forced_cpu() {
        return "cpu".into();
    }
    if cfg!(feature = "cuda") && candle_core::utils::cuda_is_available() {
        return "cuda:0".into();
    }
    if cfg!(target_os = "macos") && candle_core::utils::metal_is_available() {
        return "metal".into();
    }
    "cpu".into()
}

fn forced_cpu() -> bool {
    std::env::var("BRAIN_DEVICE").is_ok_and(|v| v.eq_ignore_ascii_case("cpu"))
}
